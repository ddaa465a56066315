// Package deploy checks the production deployment files kept at the
// repository root, docker-compose.yml and Dockerfile, without a container
// engine.
package deploy
