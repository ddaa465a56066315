# syntax=docker/dockerfile:1

FROM golang:1.27 AS build
# The toolchain the Makefile pins; the image's own Go fetches it. Every
# binary is built by make build, exactly as outside the image.
ENV GOTOOLCHAIN=go1.27.3
WORKDIR /src
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    make build

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /src/bin/worker /usr/local/bin/maestro-worker
USER nonroot:nonroot
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/maestro-worker"]
