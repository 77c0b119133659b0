from pricing import discounted


def test_twenty_percent_off():
    assert discounted(100, 20) == 80
