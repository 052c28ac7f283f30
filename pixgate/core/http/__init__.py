"""HTTP plumbing every feature's routes share: routing, body screening, error envelopes,
responses, rate limits, OpenAPI."""
