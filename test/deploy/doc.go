// Package deploy checks the production deployment files without a
// container engine: docker-compose.yml and the Dockerfile at the
// repository root, and the example catalog compose mounts.
package deploy
