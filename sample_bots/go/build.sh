#!/bin/sh
# Builds the Go kit's sample bot from Debian's packaged Go libraries, without module downloads:
#   sample_bots/go/build.sh [OUT]            OUT: default build/go under the repository root
#   sample_bots/go/build.sh --gopath [OUT]   prints the GOPATH the build uses, for `go test` and the like
# 1. protoc, with protoc-gen-go and protoc-gen-go-grpc, generates the protocol's Go code from
#    protos/fiftysix/v1/bot.proto (or $FIFTYSIX_PROTO_ROOT/fiftysix/v1/bot.proto) into
#    OUT/src/fiftysix/v1: nothing generated is checked in;
# 2. `go vet` checks the kit, the sample bot and their tests, `go test` runs the tests (a second run with
#    nothing changed reports the cached result) and `go build` writes OUT/go_bot.
# Go runs in GOPATH mode (GO111MODULE=off) over OUT (the generated package), this kit's src/ (the kit,
# fiftysix/bot, and the bot, fiftysix/cmd/go_bot) and /usr/share/gocode (Debian's golang-*-dev packages).
set -eu
kit=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$kit/../.." && pwd)
gopath_only=false
if [ "${1:-}" = --gopath ]; then
  gopath_only=true
  shift
fi
mkdir -p "${1:-$root/build/go}"
out=$(cd "${1:-$root/build/go}" && pwd)
gopath="$out:$kit:/usr/share/gocode"
if $gopath_only; then
  echo "$gopath"
  exit 0
fi
mapping=Mfiftysix/v1/bot.proto=fiftysix/v1
rm -rf "$out/src/fiftysix/v1"
mkdir -p "$out/src"
protoc -I "${FIFTYSIX_PROTO_ROOT:-$root/protos}" \
  --go_out="$out/src" --go_opt="$mapping" \
  --go-grpc_out="$out/src" --go-grpc_opt="$mapping" \
  fiftysix/v1/bot.proto
export GO111MODULE=off GOPATH="$gopath"
# gRPC 1.33 encodes through github.com/golang/protobuf, which reads the generated messages only from 1.4 on.
if ! go list -f '{{join .Imports " "}}' github.com/golang/protobuf/proto | grep -q google.golang.org/protobuf; then
  echo "build.sh: error: github.com/golang/protobuf is older than 1.4 (Debian's" \
    "golang-github-golang-protobuf-1-3-dev?): the bot would build but panic at its first call;" \
    "install golang-github-golang-protobuf-1-5-dev" >&2
  exit 1
fi
go vet fiftysix/bot fiftysix/cmd/go_bot
go test fiftysix/bot fiftysix/cmd/go_bot
go build -o "$out/go_bot" fiftysix/cmd/go_bot
