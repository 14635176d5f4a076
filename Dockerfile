# The conformance runner as a static executable, for projects without Go (docs/porting.md).
# The image holds splash-conform with the bundled reference worker and host driver, nothing else.
#
#   docker build -t splash-conform .
#   docker run --rm splash-conform                     # the worker suite against the reference
#   docker run --rm splash-conform host                # the host suite against the reference
#
# Your worker runs inside the container, so it needs its runtime there. Either copy the runner
# into the image of your worker and run it there:
#
#   COPY --from=splash-conform /usr/local/bin/splash-conform /usr/local/bin/
#   RUN splash-conform -expect expectations.json -- ./my-worker --journal {journal} --effect-log {effects}
#
# or mount a self-contained worker: docker run --rm -v "$PWD:/w" -w /w splash-conform -- ./my-worker ...
#
# The build needs the Go toolchain and the Go module proxy, nothing else; the Go test
# TestDockerfileBuildsStaticRunner runs its go build line.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -buildvcs=false -ldflags="-s -w" -o /out/usr/local/bin/ ./cmd/splash-conform ./cmd/splash-worker ./cmd/splash-host-driver
RUN mkdir -m 1777 /out/tmp

FROM scratch
COPY --from=build /out/ /
ENV TMPDIR=/tmp
ENTRYPOINT ["/usr/local/bin/splash-conform"]
