"""The one place that converts engine objects to protocol messages and back (the messages are defined in
protos/fiftysix/v1/bot.proto and generated into `fiftysix.v1`). Both sides use it: the arena encodes
views, decisions and results and checks answers; the SDK decodes views and results into engine types.

`terms.py` holds what both directions share, `encode.py` engine -> messages, `decisions.py` the
arena's decisions (the one encoder of DecisionRequests, as bytes built from kept pieces), `decode.py`
messages -> engine; everything public is importable from `fiftysix.wire`.
"""

from fiftysix.wire.decisions import DecisionEncoder, decision_request
from fiftysix.wire.decode import (
    ViewDecoder,
    card_from_message,
    deal_result_from_message,
    fault_cause_from_message,
    move_from_message,
    moves_text,
    read_answer,
    rules_from_message,
    view_from_message,
)
from fiftysix.wire.encode import (
    card_message,
    deal_end_message,
    match_end_message,
    match_start_message,
    move_message,
    rules_message,
)
from fiftysix.wire.terms import (
    MAX_ANSWER_BYTES,
    MAX_REQUEST_BYTES,
    PROTOCOL_VERSION,
    RULESET_VALUES,
    RULESETS_BY_VALUE,
    AnswerError,
    FaultCause,
    FaultRecord,
    MessageError,
    TimeControl,
)

__all__ = [
    "MAX_ANSWER_BYTES",
    "MAX_REQUEST_BYTES",
    "PROTOCOL_VERSION",
    "RULESETS_BY_VALUE",
    "RULESET_VALUES",
    "AnswerError",
    "DecisionEncoder",
    "FaultCause",
    "FaultRecord",
    "MessageError",
    "TimeControl",
    "ViewDecoder",
    "card_from_message",
    "card_message",
    "deal_end_message",
    "deal_result_from_message",
    "decision_request",
    "fault_cause_from_message",
    "match_end_message",
    "match_start_message",
    "move_from_message",
    "move_message",
    "moves_text",
    "read_answer",
    "rules_from_message",
    "rules_message",
    "view_from_message",
]
