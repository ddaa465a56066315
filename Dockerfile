# syntax=docker/dockerfile:1

FROM golang:1.27 AS build
# The image sets GOTOOLCHAIN=local, which fails when the image's Go is older
# than go.mod's go line; auto fetches the required toolchain instead.
ENV GOTOOLCHAIN=auto CGO_ENABLED=0
WORKDIR /src
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    go build -trimpath -ldflags="-s -w" -o /out/maestro-worker ./cmd/worker

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/maestro-worker /usr/local/bin/maestro-worker
USER nonroot:nonroot
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/maestro-worker"]
