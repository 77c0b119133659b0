from app import price_with_tax


def test_price_with_tax():
    assert price_with_tax(10.0) == 12.0


def test_price_with_a_rate():
    assert price_with_tax(10.0, rate=0.5) == 15.0
