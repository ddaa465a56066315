package deploy_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// stage is one FROM … stage of a Dockerfile, its continuation lines joined.
type stage struct {
	from         string
	instructions []string
}

func parseDockerfile(t *testing.T, path string) []stage {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	joined := regexp.MustCompile(`\\\n\s*`).ReplaceAllString(string(data), "")
	var stages []stage
	for _, line := range strings.Split(joined, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if from, ok := strings.CutPrefix(line, "FROM "); ok {
			stages = append(stages, stage{from: strings.Fields(from)[0]})
			continue
		}
		require.NotEmpty(t, stages, "instruction before FROM: %s", line)
		stages[len(stages)-1].instructions = append(stages[len(stages)-1].instructions, line)
	}
	return stages
}

// makeTarget is a Makefile target's recipe, one command a line.
func makeTarget(t *testing.T, makefile, target string) []string {
	t.Helper()
	var recipe []string
	in := false
	for _, line := range strings.Split(makefile, "\n") {
		switch {
		case strings.HasPrefix(line, target+":"):
			in = true
		case in && strings.HasPrefix(line, "\t"):
			recipe = append(recipe, strings.TrimSpace(line))
		case in:
			require.NotEmpty(t, recipe, "target %s has no recipe", target)
			return recipe
		}
	}
	require.NotEmpty(t, recipe, "Makefile has no target %s", target)
	return recipe
}

// makeVar is the value a Makefile assigns to name.
func makeVar(t *testing.T, makefile, name string) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^(?:export\s+)?` + name + `\s*:?=\s*(.+)$`).FindStringSubmatch(makefile)
	require.NotNil(t, m, "Makefile sets no %s", name)
	return strings.TrimSpace(m[1])
}

// TestDockerfileBuildsWhatMakeBuilds: the image's binary is the one make
// build produces, with the toolchain the Makefile pins (the one the tests
// run on), and it runs as a non-root user on a static base image.
func TestDockerfileBuildsWhatMakeBuilds(t *testing.T) {
	t.Parallel()
	stages := parseDockerfile(t, "../../Dockerfile")
	require.GreaterOrEqual(t, len(stages), 2, "want a multi-stage build")
	build, final := stages[0], stages[len(stages)-1]

	goMod, err := os.ReadFile("../../go.mod")
	require.NoError(t, err)
	goVersion := regexp.MustCompile(`(?m)^go\s+(\d+\.\d+)`).FindSubmatch(goMod)
	require.NotNil(t, goVersion)
	require.Equal(t, "golang:"+string(goVersion[1]), strings.Split(build.from, " ")[0])

	data, err := os.ReadFile("../../Makefile")
	require.NoError(t, err)
	makefile := string(data)
	toolchain := makeVar(t, makefile, "GOTOOLCHAIN")
	require.Contains(t, build.instructions, "ENV GOTOOLCHAIN="+toolchain,
		"the image must build with the toolchain the Makefile pins for the tests")

	// The build runs make build, and make build builds every command,
	// the worker among them, statically, with no build tags: the
	// failpoint tag of the crash tests never reaches a release.
	var runs []string
	for _, in := range build.instructions {
		if strings.HasPrefix(in, "RUN ") {
			runs = append(runs, in)
		}
	}
	require.NotEmpty(t, runs)
	buildRun := runs[len(runs)-1]
	require.True(t, strings.HasSuffix(buildRun, " make build"), "the build stage's last RUN must be make build, got %q", buildRun)
	for _, run := range runs {
		require.NotContains(t, run, "go build", "the image builds only through make build")
	}
	recipe := makeTarget(t, makefile, "build")
	require.Len(t, recipe, 1)
	require.Equal(t, "CGO_ENABLED=0 $(GO) build $(BUILD_FLAGS) -o bin/ ./cmd/...", recipe[0])
	require.NotContains(t, makeVar(t, makefile, "BUILD_FLAGS"), "-tags")
	require.DirExists(t, "../../cmd/worker")

	require.Contains(t, final.from, "distroless/static")
	require.Contains(t, final.instructions, "COPY --from=build /src/bin/worker /usr/local/bin/maestro-worker",
		"the image ships make build's worker binary")
	var user string
	for _, in := range final.instructions {
		if u, ok := strings.CutPrefix(in, "USER "); ok {
			user = u
		}
	}
	require.NotEmpty(t, user, "final stage sets no USER")
	require.NotContains(t, []string{"root", "0", "root:root", "0:0"}, user)
	require.Contains(t, final.instructions, `ENTRYPOINT ["/usr/local/bin/maestro-worker"]`)
}
