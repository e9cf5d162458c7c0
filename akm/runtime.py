"""Process-wide handles: the store, the manifest, the embedder, the verifier and the target model.

Each is created once, on first use, and injected into the functions that need it, so a command
that never generates text never loads a language model. A model that cannot be loaded becomes a
:class:`ModelUnavailableError` naming the model and the reason, never a traceback.

The generator is the local target model behind the speculative decoder, or, when ``target_model``
is ``openai+http(s)://host:port/v1#model``, a remote OpenAI-compatible server
(:mod:`akm.answer.remote`): nothing is loaded here then, and nothing is connected until an answer asks.
"""

from __future__ import annotations

import contextlib
import gc
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from akm.embedding import Embedder, EmbeddingModelError, load_embedder
from akm.errors import ModelUnavailableError
from akm.manifest import Manifest, load_manifest
from akm.settings import Settings
from akm.store import EvidenceStore, open_store
from akm.verify import ClaimVerifier, LexicalClaimVerifier, NLIModelError, NLIVerifier, StrictestOf

if TYPE_CHECKING:
    from akm.answer import AnswerGenerator, SpeculativeAnswerGenerator
    from decoding.answer_store import AnswerStore
    from decoding.draft_head import DraftHead
    from decoding.drafters import ModelDrafter
    from decoding.models import LoadedModel


def freeze_loaded_objects() -> None:
    """Take everything allocated so far (imported modules, models, tokenizers) out of the cycle collector's scans.

    With torch, transformers and the embedding model loaded a process holds about half a million
    tracked objects; a full collection walks them all (measured: about 270 ms on two cores) and,
    every few hundred queries, lands inside one query's latency. Frozen objects are still freed
    by reference counting; only cycle detection skips them, so this is called once models are loaded.
    """
    gc.collect()
    gc.freeze()


@dataclass
class Runtime:
    """Lazily created handles built from one settings object."""

    settings: Settings
    _store: EvidenceStore | None = field(default=None, repr=False)
    _manifest: Manifest | None = field(default=None, repr=False)
    _embedder: Embedder | None = field(default=None, repr=False)
    _embedder_loaded: bool = field(default=False, repr=False)
    _verifier: ClaimVerifier | None = field(default=None, repr=False)
    _generator: AnswerGenerator | None = field(default=None, repr=False)
    _local_generator: SpeculativeAnswerGenerator | None = field(default=None, repr=False)

    @classmethod
    def from_settings(
        cls, settings: Settings, *, store: EvidenceStore | None = None, verifier: ClaimVerifier | None = None
    ) -> Runtime:
        """Handles built from ``settings``; ``store`` and ``verifier``, when given, are used as they are
        (an API worker shares its store and verifier between answering and re-verification)."""
        return cls(settings=settings, _store=store, _verifier=verifier)

    @property
    def store(self) -> EvidenceStore:
        if self._store is None:
            self._store = open_store(self.settings.resolved_database_url)
        return self._store

    @property
    def manifest(self) -> Manifest:
        """The configured manifest, knowing the corpus files the store recorded (for direct reads)."""
        if self._manifest is None:
            self._manifest = load_manifest(self.settings.manifest_path).with_corpus_files(
                self.store.corpus_files()
            )
        return self._manifest

    @property
    def embedder(self) -> Embedder | None:
        if not self._embedder_loaded:
            name = self.settings.embedding_model
            try:
                self._embedder = None if name == "none" else load_embedder(name, device=self.settings.device)
            except EmbeddingModelError as error:
                raise ModelUnavailableError.could_not_load("embedding", name, str(error)) from error
            self._embedder_loaded = True
            if self._embedder is not None:
                # Weights load on first use; loading them here keeps that out of the first query. A
                # failure is left to the semantic lane, which reports it while the other lanes answer.
                with contextlib.suppress(EmbeddingModelError):
                    self._embedder.embed(["warm-up"])
            freeze_loaded_objects()
        return self._embedder

    @property
    def verifier(self) -> ClaimVerifier:
        if self._verifier is None:
            lexical = LexicalClaimVerifier(support_threshold=self.settings.support_threshold)
            if self.settings.nli_model:
                try:
                    nli = NLIVerifier.from_directory(self.settings.nli_model, device=self.settings.device)
                except NLIModelError as error:
                    raise ModelUnavailableError.could_not_load(
                        "NLI", self.settings.nli_model, str(error)
                    ) from error
                # The NLI model can only make a verdict stricter, never grant support alone.
                self._verifier = StrictestOf(lexical, nli)
            else:
                self._verifier = lexical
        return self._verifier

    @property
    def generator(self) -> AnswerGenerator:
        """The configured generator: remote when ``target_model`` names a server, else the local one."""
        if self._generator is None:
            from akm.answer.remote import is_remote_target, remote_generator

            if is_remote_target(self.settings.target_model):
                self._generator = remote_generator(self.settings)
            else:
                self._generator = self.local_generator
        return self._generator

    @property
    def local_generator(self) -> SpeculativeAnswerGenerator:
        """The target model loaded in this process behind the speculative decoder (``akm serve
        --generator-only`` serves it); ModelUnavailableError when ``target_model`` names a server."""
        if self._local_generator is None:
            from akm.answer.remote import is_remote_target

            if is_remote_target(self.settings.target_model):
                raise ModelUnavailableError.could_not_load(
                    "target",
                    self.settings.target_model,
                    "it names a remote generator server; a local model is needed here",
                )
            self._local_generator = self._load_generator()
        return self._local_generator

    def _load_generator(self) -> SpeculativeAnswerGenerator:
        from akm.answer import SpeculativeAnswerGenerator
        from decoding.models import ModelLoadError, load_target

        settings = self.settings
        if settings.torch_threads:
            import torch

            torch.set_num_threads(settings.torch_threads)
        try:
            loaded = load_target(
                settings.target_model,
                settings.model_cache_dir,
                device=settings.device,
                dtype=settings.dtype,
                prepack=settings.prepack_weights,
            )
        except ModelLoadError as error:
            raise ModelUnavailableError.could_not_load("target", settings.target_model, str(error)) from error
        except (OSError, RuntimeError, ValueError) as error:
            raise ModelUnavailableError.could_not_load(
                "target", settings.target_model, f"{type(error).__name__}: {error}"
            ) from error
        generator = SpeculativeAnswerGenerator(
            loaded.model,
            loaded.tokenizer,
            cost_cache_dir=settings.model_cache_dir,
            model_drafter=self._load_model_drafter(loaded) if settings.draft_model else None,
            draft_head=self._load_draft_head(loaded),
            answer_store=self._load_answer_store(loaded),
            history_tokens=settings.decode_history_tokens,
            prefix_reuse=settings.decode_prefix_reuse,
        )
        freeze_loaded_objects()
        return generator

    def _load_model_drafter(self, target: LoadedModel) -> ModelDrafter:
        from decoding.drafters import ModelDrafter, VocabularyMismatchError
        from decoding.models import ModelLoadError, load_causal_lm

        settings = self.settings
        try:
            draft = load_causal_lm(
                settings.draft_model,
                device=settings.device,
                dtype=settings.dtype,
                prepack=settings.prepack_weights,
            )
            return ModelDrafter(
                draft.model,
                target_vocab_size=int(target.model.config.vocab_size),
                tokenizer=draft.tokenizer,
                target_tokenizer=target.tokenizer,
            )
        except (ModelLoadError, VocabularyMismatchError) as error:
            raise ModelUnavailableError.could_not_load("draft", settings.draft_model, str(error)) from error

    def _draft_head_path(self, target: LoadedModel) -> Path | None:
        """The head file settings.draft_head names: None when "off"; "auto" is `akm train-draft-head`'s."""
        from decoding.draft_head import default_head_path

        choice = self.settings.draft_head.strip()
        if choice.lower() in ("off", "none", ""):
            return None
        return (
            default_head_path(self.settings.model_cache_dir, target.name)
            if choice == "auto"
            else Path(choice)
        )

    def _load_draft_head(self, target: LoadedModel) -> DraftHead | None:
        """The trained head named by settings.draft_head: none when "off", or "auto" with no head trained."""
        from decoding.draft_head import DraftHeadFileError, DraftHeadMismatchError, load_draft_head

        path = self._draft_head_path(target)
        if path is None or (self.settings.draft_head.strip() == "auto" and not path.is_file()):
            return None
        try:
            return load_draft_head(path, target.model)
        except (DraftHeadFileError, DraftHeadMismatchError) as error:
            raise ModelUnavailableError.could_not_load("draft head", str(path), str(error)) from error

    def _load_answer_store(self, target: LoadedModel) -> AnswerStore | None:
        """The answers `akm train-draft-head` stored beside the head, when there are some."""
        from decoding.answer_store import AnswerStoreFileError, answer_store_path, load_answer_store
        from decoding.draft_head import DraftHeadMismatchError

        head = self._draft_head_path(target)
        if head is None or not answer_store_path(head).is_file():
            return None
        path = answer_store_path(head)
        try:
            return load_answer_store(path, target.model)
        except (AnswerStoreFileError, DraftHeadMismatchError) as error:
            raise ModelUnavailableError.could_not_load("answer store", str(path), str(error)) from error

    def close(self) -> None:
        close = getattr(self._generator, "close", None)
        if self._generator is not self._local_generator and callable(close):
            close()  # a remote generator's HTTP connections
        self._generator = None
        if self._store is not None:
            self._store.close()
            self._store = None


__all__ = ["ModelUnavailableError", "Runtime", "freeze_loaded_objects"]
