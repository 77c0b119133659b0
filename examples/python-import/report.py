"""Serialises a sales report."""


def to_json(report):
    return json.dumps(report, sort_keys=True)
