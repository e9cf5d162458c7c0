"""Draft trees: several candidate continuations verified in one target forward.

A verification forward over 4 to 16 rows runs on weights packed for 8 or 16 rows, so a chain of 3
drafts (4 rows, padded to 8) costs the same as a chain of 7 (`docs/speculative-decoding.md`, "Verify
cost"). When the chosen chain is shorter than what its block costs, the spare rows can carry other
candidates: another drafter's proposal, another place the context's suffix occurs. The candidates
are merged into a trie rooted at the pending token (shared prefixes become one node); each node is
one row of the forward, attending to the cached positions and to its own ancestors only, at the
rotary position of its depth. Greedy acceptance walks down from the root, taking at each node the
child whose token is the target's argmax there; the tokens committed are exactly the target's greedy
tokens along that path, as in a chain. Only greedy decoding verifies trees; sampling keeps chains.

Rows: row 0 is the pending token, row i + 1 is node i. Nodes are listed parents first.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import torch


@dataclass(frozen=True)
class DraftTree:
    """A trie of draft tokens below the pending token; nodes 0..main-1 are the main chain."""

    tokens: list[int] = field(default_factory=list)
    # Parent node of each node; -1 is the root (the pending token).
    parents: list[int] = field(default_factory=list)
    depths: list[int] = field(default_factory=list)
    main: int = 0

    @classmethod
    def from_chains(cls, chains: Sequence[Sequence[int]], max_nodes: int | None = None) -> DraftTree:
        """Merge `chains` (each a continuation of the pending token; the first is the main chain) into
        a trie of at most `max_nodes` nodes. A chain that no longer fits is cut where the budget ends."""
        tokens: list[int] = []
        parents: list[int] = []
        depths: list[int] = []
        children: dict[tuple[int, int], int] = {}
        main = 0
        for index, chain in enumerate(chains):
            node = -1
            for token in chain:
                child = children.get((node, token))
                if child is None:
                    if max_nodes is not None and len(tokens) >= max_nodes:
                        break
                    child = len(tokens)
                    children[(node, token)] = child
                    tokens.append(int(token))
                    parents.append(node)
                    depths.append(1 if node < 0 else depths[node] + 1)
                node = child
            if index == 0:
                main = len(tokens)
        return cls(tokens, parents, depths, main)

    @property
    def size(self) -> int:
        return len(self.tokens)

    @property
    def depth(self) -> int:
        return max(self.depths, default=0)

    @property
    def is_chain(self) -> bool:
        return self.size == self.main

    def row_parents(self) -> list[int]:
        """Parent row of every row of the forward: -1 for the pending token's row (it follows the cache)."""
        return [-1, *(parent + 1 for parent in self.parents)]

    def path_rows(self, path: Sequence[int]) -> list[int]:
        """Rows to keep in the cache after accepting the nodes of `path`: the pending row, then theirs."""
        return [0, *(node + 1 for node in path)]

    def path_tokens(self, path: Sequence[int]) -> list[int]:
        return [self.tokens[node] for node in path]

    def accept_greedy(self, logits: torch.Tensor) -> tuple[list[int], int]:
        """Walk down while the target's argmax at a node is one of its children's tokens.

        `logits` has one row per forward row. Returns the accepted nodes (root to leaf) and the target's
        token after the last of them.
        """
        if logits.shape[0] != self.size + 1:
            raise ValueError(f"a tree of {self.size} nodes needs {self.size + 1} rows of logits")
        children = {
            (parent, token): node
            for node, (parent, token) in enumerate(zip(self.parents, self.tokens, strict=True))
        }
        best = torch.argmax(logits, dim=-1).tolist()
        path: list[int] = []
        node = -1
        while True:
            token = int(best[node + 1])
            child = children.get((node, token))
            if child is None:
                return path, token
            path.append(child)
            node = child


def tree_mask(parents: Sequence[int], start: int, device: torch.device | None = None) -> torch.Tensor:
    """(rows, start + rows) boolean attention mask: every row sees the `start` cached positions, its
    ancestor rows and itself. `parents[r]` is row r's parent row, -1 for a row hanging off the cache;
    parents come before children."""
    count = len(parents)
    own = torch.eye(count, dtype=torch.bool, device=device)
    for row, parent in enumerate(parents):
        if parent >= row:
            raise ValueError(f"row {row} has parent {parent}: parents must come before their children")
        if parent >= 0:
            own[row] |= own[parent]
    return torch.cat((torch.ones(count, start, dtype=torch.bool, device=device), own), dim=1)


def row_depths(parents: Sequence[int]) -> list[int]:
    """Depth of every row below the cache: 0 for rows hanging off it, parent's + 1 otherwise."""
    depths: list[int] = []
    for row, parent in enumerate(parents):
        if parent >= row:
            raise ValueError(f"row {row} has parent {parent}: parents must come before their children")
        depths.append(0 if parent < 0 else depths[parent] + 1)
    return depths
