"""Names the decoding benchmark accepts, kept apart from the benchmark itself so that a command line
can offer them without importing torch."""

FORMATS = ("spec-bench", "squad", "answers")
# Formats whose prompts carry passages, so the evidence drafter has something to copy from.
GROUNDED_FORMATS = ("squad", "answers")
METHODS = (
    "plain",
    "prompt-lookup",
    "evidence",
    "history",
    "draft-head",
    "self-speculative",
    "speculative",
    "speculative-no-head",
    "speculative-chain",
    "speculative-no-history",
    "speculative-cold",
    "speculative-no-store",
    "speculative-no-successor",
    "hf-plain",
    "hf-pld",
)
# Methods that need a trained draft head (`akm train-draft-head`).
HEAD_METHODS = ("draft-head", "speculative-no-head")
# Run only when asked for: `history` alone (earlier outputs), `speculative` verifying chains only
# (what draft trees add), `speculative` without the history drafter (what earlier outputs add), and
# `speculative` prefilling every prompt whole (what keeping the cache between prompts adds), and
# `speculative` without the answer store (what the target's stored answers add), and `speculative`
# without the one-token successor guess (what verifying a guess on otherwise plain steps adds).
OPT_IN_METHODS = (
    "history",
    "speculative-chain",
    "speculative-no-history",
    "speculative-cold",
    "speculative-no-store",
    "speculative-no-successor",
)
# Methods that need an answer store (`akm train-draft-head` writes one beside the head).
STORE_METHODS = ("speculative-no-store",)
