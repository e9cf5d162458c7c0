"""Curated word lists the structural checks rest on: direction words, relation verbs, reporting
frames and degree words.

Direction words are listed as words, not stems, and stemmed with the same stemmer as the
texts, so every inflection (increase, increases, increased, increasing; faster, fastest)
meets its entry. A word sits on one pole of the amount axis: "up" says a quantity rises,
grows, speeds up or is promoted; "down" says it falls, shrinks, slows or is held back.
"""

from __future__ import annotations

UP_WORDS: tuple[str, ...] = (
    "increase", "raise", "elevate", "higher", "highest", "greater", "greatest", "more", "most",
    "enhance", "upregulate", "up-regulate", "upregulation", "promote", "improve", "gain", "boost",
    "accelerate", "stimulate", "exceed", "larger", "largest", "rise", "augment", "amplify",
    "positive", "major", "maximal", "maximum", "overexpress", "strengthen", "extend", "prolong",
    "faster", "fastest", "quicker", "quickest", "heighten", "intensify", "expand", "widen",
    "potentiate", "facilitate", "outperform", "overestimate", "longer", "longest", "stronger",
    "strongest", "bigger", "biggest", "surge", "excess", "hyperactivate", "upward",
)  # fmt: skip
DOWN_WORDS: tuple[str, ...] = (
    "decrease", "reduce", "lower", "lowest", "less", "least", "fewer", "fewest", "diminish",
    "downregulate", "down-regulate", "downregulation", "inhibit", "suppress", "impair", "loss",
    "lose", "decline", "drop", "attenuate", "smaller", "smallest", "slow", "slower", "slowest",
    "negative", "minor", "minimal", "minimum", "weaken", "shorten", "fall", "decelerate",
    "worsen", "deteriorate", "lessen", "narrow", "shrink", "dampen", "hinder", "impede",
    "underperform", "underestimate", "shorter", "shortest", "weaker", "weakest", "halve",
    "plummet", "plunge", "deficit", "underexpress", "downward",
)  # fmt: skip

# Verbs that link a subject to an object: the roles around them must not swap.
RELATION_WORDS: tuple[str, ...] = (
    "cause", "activate", "inhibit", "induce", "regulate", "bind", "target", "precede", "follow",
    "require", "predict", "protect", "prevent", "produce", "mediate", "trigger", "block",
    "phosphorylate", "cleave", "recruit", "repress", "control", "drive", "lead", "exceed",
    "outperform", "outnumber", "replace", "suppress", "promote", "enhance", "reduce", "increase",
    "decrease", "raise", "lower", "attenuate", "stimulate", "kill", "infect", "encode", "degrade",
    "contribute", "depend", "determine", "affect", "modulate", "contain", "own", "acquire",
    "defeat", "beat", "succeed", "employ", "hire", "appoint", "elect", "marry", "founded",
)  # fmt: skip

# Words that say how much or how exclusively; a claim's degree word must be stated.
DEGREE_WORDS: frozenset[str] = frozenset(
    ["too", "much", "only", "all", "every", "always", "never", "solely", "exclusively", "entirely",
     "completely", "fully", "mainly", "mostly", "largely", "primarily", "predominantly", "sole",
     "main", "primary", "majority", "minority", "universal", "universally", "minuscule",
     "negligible", "tiny", "massive", "huge", "dramatic", "dramatically", "slight", "slightly",
     "marginal", "marginally", "substantial", "substantially"]
)  # fmt: skip

# Participles and nouns that report a statement rather than make it.
REPORTING_VERBS: str = (
    r"claim(?:s|ed)?|argue[sd]?|alleg(?:e|es|ed)|contend(?:s|ed)?|assert(?:s|ed)?|believe[sd]?|"
    r"speculate[sd]?|hypothesi[sz]e[sd]?|postulate[sd]?|propose[sd]?|suggest(?:s|ed)?|"
    r"insist(?:s|ed)?|maintain(?:s|ed)?|say|says|said|think|thinks|thought|fear(?:s|ed)?|"
    r"warn(?:s|ed)?|report(?:s|ed)?|rumou?red|assume[sd]?|presume[sd]?"
)
# Who reports: a group that does not vouch for what it says.
REPORTERS: str = (
    r"critics|opponents|proponents|skeptics|sceptics|some|others|many|supporters|advocates|"
    r"observers|commentators|analysts|experts|people|scientists|researchers|activists|he|she|they|"
    r"officials|authors|investigators"
)
