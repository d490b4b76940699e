"""The checked-in generated protocol code is exactly what protos/generate.py writes from protos/, and
nothing is generated for the standard health proto, which describes the service grpcio-health-checking
serves."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
from google.protobuf import descriptor_pb2
from grpc_health.v1 import health_pb2
from grpc_tools import protoc

ROOT = Path(__file__).resolve().parents[2]


def load_generator() -> object:
    spec = importlib.util.spec_from_file_location("protos_generate", ROOT / "protos" / "generate.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["protos_generate"] = module
    spec.loader.exec_module(module)
    return module


def test_generated_code_matches_protos(tmp_path: Path) -> None:
    generator = load_generator()
    generator.generate(tmp_path)  # type: ignore[attr-defined]
    # fiftysix/v1/ is all generated; the rest of fiftysix/ is the game, written by hand.
    fresh = {
        path.relative_to(tmp_path): path.read_bytes()
        for path in (tmp_path / "fiftysix" / "v1").rglob("*")
        if path.is_file()
    }
    checked_in = {
        path.relative_to(ROOT): path.read_bytes()
        for path in (ROOT / "fiftysix" / "v1").rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    }
    assert sorted(fresh) == sorted(checked_in), "generated files differ: run python protos/generate.py"
    assert [path.name for path in tmp_path.iterdir()] == ["fiftysix"], "only the protocol's own code"
    stale = [str(name) for name, content in fresh.items() if checked_in[name] != content]
    if stale:
        pytest.fail(f"out of date with protos/: {stale}; run python protos/generate.py and commit the result")


def _shape(file: descriptor_pb2.FileDescriptorProto) -> dict[str, object]:
    """What a proto file says on the wire: its package, messages (with nested enums and fields), enums
    and services; not the order of declarations, the comments or the per-language options."""

    def message(proto: descriptor_pb2.DescriptorProto) -> object:
        return (
            sorted(
                (field.name, field.number, field.type, field.label, field.type_name) for field in proto.field
            ),
            sorted((nested.name, message(nested)) for nested in proto.nested_type),
            sorted(
                (enum.name, sorted((value.name, value.number) for value in enum.value))
                for enum in proto.enum_type
            ),
        )

    return {
        "package": file.package,
        "messages": sorted((proto.name, message(proto)) for proto in file.message_type),
        "services": sorted(
            (
                service.name,
                sorted(
                    (
                        method.name,
                        method.input_type,
                        method.output_type,
                        method.client_streaming,
                        method.server_streaming,
                    )
                    for method in service.method
                ),
            )
            for service in file.service
        ),
    }


def test_the_health_proto_is_the_service_the_python_side_serves(tmp_path: Path) -> None:
    descriptors = tmp_path / "health.binpb"
    arguments = [
        "grpc_tools.protoc",
        f"--proto_path={ROOT / 'protos'}",
        f"--descriptor_set_out={descriptors}",
        "grpc/health/v1/health.proto",
    ]
    assert protoc.main(arguments) == 0
    ours = descriptor_pb2.FileDescriptorSet.FromString(descriptors.read_bytes()).file[0]
    served = descriptor_pb2.FileDescriptorProto.FromString(health_pb2.DESCRIPTOR.serialized_pb)
    assert ours.name == "grpc/health/v1/health.proto"
    assert _shape(ours) == _shape(served)
    assert "Licensed under the Apache License" in (ROOT / "protos" / ours.name).read_text(encoding="utf-8")
