from report import to_json


def test_to_json_sorts_keys():
    assert to_json({"b": 1, "a": 2}) == '{"a": 2, "b": 1}'
