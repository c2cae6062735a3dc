import unittest

from greet import greet


class TestGreet(unittest.TestCase):
    def test_greet(self):
        assert greet("Ada") == "Hello Ada!"
