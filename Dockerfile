# RunLore's operator image, for those who build with Docker:
#
#   docker build --build-arg VERSION=0.1.0 -t REGISTRY/runlore:0.1.0 .
#
# `make image` builds the same image (the static lore binary on an empty
# base, user 65532) without a container engine, byte-reproducibly, as a
# tarball for `docker load`, `ctr images import` or `crane push`
# (docs/operations.md, "Building and pushing the image").
ARG GO_VERSION=1.26
FROM --platform=$BUILDPLATFORM golang:${GO_VERSION} AS build
ARG TARGETOS=linux
ARG TARGETARCH
ARG VERSION=dev
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 GOOS=${TARGETOS} GOARCH=${TARGETARCH} \
    go build -trimpath -buildvcs=false -ldflags "-s -w -X main.version=${VERSION}" -o /out/lore ./cmd/lore
RUN mkdir -p /out/etc /out/tmp && chmod 1777 /out/tmp && \
    printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/tmp:/sbin/nologin\n' >/out/etc/passwd && \
    printf 'root:x:0:\nnonroot:x:65532:\n' >/out/etc/group

FROM scratch
COPY --from=build /out/ /
USER 65532:65532
ENV PATH=/ HOME=/tmp
WORKDIR /
ENTRYPOINT ["/lore"]
