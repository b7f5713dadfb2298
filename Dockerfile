# syntax=docker/dockerfile:1
# The gateway as a small static image: built with the Go toolchain, run on
# distroless/static (CA certificates and time zones, no shell, no libc) as
# a non-root user.
#
#   docker build -t tradenet-gateway .
#   docker run -p 8080:8080 -e UPSTREAM_URL=https://datanode.example.com \
#     -e EXPLORER_URL=https://explorer.example.com/rest tradenet-gateway

FROM golang:1.26-bookworm AS build
WORKDIR /src
# Modules first: this layer is reused while only the sources change.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# The same command scripts/check-docker-build.sh runs outside Docker.
RUN CGO_ENABLED=0 GOOS=linux go build -trimpath -buildvcs=false -ldflags="-s -w" -o /out/gateway .

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/gateway /gateway
# nonroot is uid 65532; the gateway writes nothing to disk.
USER 65532:65532
EXPOSE 8080
ENV LISTEN_ADDR=:8080 LOG_FORMAT=json
ENTRYPOINT ["/gateway"]
