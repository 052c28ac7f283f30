"""The sandbox: the simulated settling bank behind the provider interface, its DICT and its test
routes."""
