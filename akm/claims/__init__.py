"""Answer → atomic claims (id, text, span, class, importance, cited evidence).

Pure text logic: nothing here touches the store or the decoder.
"""

from akm.claims.extraction import (
    CLAIM_CLASSES,
    ClaimClass,
    ExtractedClaim,
    Importance,
    claim_id_for,
    detect_claim_class,
    extract_claims,
    is_claimable,
    split_clauses,
)
from akm.claims.quantities import Quantity, mentions_date, months, quantities, same_amount
from akm.claims.segmentation import (
    TextSpan,
    asked_before,
    cited_evidence,
    claim_text,
    is_field_entry,
    is_list_item,
    is_plain_title,
    is_question,
    is_run_in_heading,
    is_table_row,
    referred_before,
    row_header,
    sentence_spans,
    strip_citations,
    table_header,
)

__all__ = [
    "CLAIM_CLASSES",
    "ClaimClass",
    "ExtractedClaim",
    "Importance",
    "Quantity",
    "TextSpan",
    "asked_before",
    "cited_evidence",
    "claim_id_for",
    "claim_text",
    "detect_claim_class",
    "extract_claims",
    "is_claimable",
    "is_field_entry",
    "is_list_item",
    "is_plain_title",
    "is_question",
    "is_run_in_heading",
    "is_table_row",
    "mentions_date",
    "months",
    "quantities",
    "referred_before",
    "row_header",
    "same_amount",
    "sentence_spans",
    "split_clauses",
    "strip_citations",
    "table_header",
]
