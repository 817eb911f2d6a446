from clarigate.agent.protocol import HumanInputRequest, Option, ui_text


def test_request_artifact_omits_missing_context():
    req = HumanInputRequest(
        request_id="clarification:c1",
        tool_call_id="c1",
        question="Which framework?",
        input_mode="choice_with_other",
        options=[Option(id="option-1", label="React", value="React")],
    )
    art = req.to_artifact()
    assert art["version"] == 1 and art["kind"] == "human_input_request"
    assert "context" not in art
    assert HumanInputRequest.model_validate(art) == req


def test_ui_text_fills_placeholders_in_chinese():
    assert ui_text("answered_by", "zh", who="小王", answer="Vue") == "✅ 小王 已回答：Vue"
