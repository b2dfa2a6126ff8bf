# Draft image for compose.yaml: Debian 12 packages only, the same script the README uses.
FROM debian:12
WORKDIR /src
COPY . .
RUN bash scripts/deps.sh && bash scripts/build.sh && cp build/codeq /usr/local/bin/codeq
ENTRYPOINT ["/usr/local/bin/codeq"]
