"""A client's patience with the server: busy answers waited out as asked, the last answer given back."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from tenacity import stop_after_attempt

from connectors.patience import server_asked_wait, server_patience

pytestmark = pytest.mark.fast  # no server: in the fast lane


@dataclass
class Answer:
    status_code: int
    headers: dict[str, str] = field(default_factory=dict)


def test_a_busy_server_is_waited_out_as_long_as_it_asks_within_the_bound() -> None:
    answers = iter([Answer(429, {"retry-after": "7"}), Answer(503), Answer(429, {"retry-after": "600"}), Answer(200)])
    slept: list[float] = []
    patience = server_patience(statuses=(429, 503), asked_default_s=2.0, asked_max_s=30.0, sleep=slept.append)
    assert patience(lambda: next(answers)).status_code == 200
    assert slept == [7.0, 2.0, 30.0]  # asked, the default without Retry-After, at most the bound


def test_once_it_stops_the_last_answer_is_returned_and_an_unreachable_server_is_tried_again() -> None:
    slept: list[float] = []
    patience = server_patience(statuses=(429,), asked_default_s=1.0, asked_max_s=5.0, stop=stop_after_attempt(2),
                               sleep=slept.append)
    assert patience(lambda: Answer(429)).status_code == 429 and slept == [1.0]
    tries = iter([ConnectionError("refused"), Answer(200)])

    def send() -> Answer:
        got = next(tries)
        if isinstance(got, Exception):
            raise got
        return got

    slept.clear()
    patience = server_patience(statuses=(429,), asked_default_s=1.0, asked_max_s=5.0, unreachable=ConnectionError,
                               unreachable_wait_s=3.0, sleep=slept.append)
    assert patience(send).status_code == 200 and slept == [3.0]
    assert server_asked_wait(Answer(503, {"retry-after": ""}), 4.0, 10.0) == 4.0
