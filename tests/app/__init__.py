"""Tests of the whole HTTP surface: isolation, hostile input, fuzzing, OpenAPI, methods."""
