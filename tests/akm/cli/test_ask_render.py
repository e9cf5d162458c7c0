import pytest

from akm.cli.ask import _no_answer


@pytest.mark.parametrize(
    ("finish_reason", "expected_start"),
    [
        ("length", "(no answer: the model reached the token limit"),
        ("context_window", "(no answer: the model reached the token limit"),
        ("eos", "(no answer)"),
    ],
    ids=["token-limit", "context-window", "finished"],
)
def test_an_empty_answer_says_why(finish_reason: str, expected_start: str) -> None:
    message = _no_answer({"finish_reason": finish_reason})
    assert message.startswith(expected_start)
    assert (finish_reason == "eos") == (message == "(no answer)")
