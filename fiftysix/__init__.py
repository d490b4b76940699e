"""The card game 56: the rules engine (`fiftysix.engine`), game records and their replay check, golden
transcripts, readable text for people, and the protocol for bots (the generated `fiftysix.v1` and the
one module that converts engine objects to and from its messages, `fiftysix.wire`).

Everything but the wire works without gRPC; the engine uses the standard library alone. This is what a
bot author or a researcher needs, and nothing of the host (the `arena` package).
"""
