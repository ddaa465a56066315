package deploy_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/loader"
	"github.com/compose-spec/compose-go/v2/types"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

const composeFile = "../docker-compose.yml"

// requiredEnv is what an operator must provide; the compose file has no
// defaults for secrets.
func requiredEnv() types.Mapping {
	return types.Mapping{
		"POSTGRES_PASSWORD":    "s3cret",
		"TWILIO_ACCOUNT_SID":   "AC123",
		"TWILIO_AUTH_TOKEN":    "token",
		"TWILIO_FROM":          "+15550100",
		"SES_REGION":           "us-east-1",
		"SES_FROM":             "maestro@example.com",
		"MAESTRO_CATALOG_FILE": "./catalog.yaml",
	}
}

func load(ctx context.Context, t *testing.T, content []byte, env types.Mapping) (*types.Project, error) {
	t.Helper()
	path, err := filepath.Abs(composeFile)
	require.NoError(t, err)
	return loader.LoadWithContext(ctx, types.ConfigDetails{
		WorkingDir:  filepath.Dir(path),
		ConfigFiles: []types.ConfigFile{{Filename: path, Content: content}},
		Environment: env,
	})
}

func readCompose(t *testing.T) []byte {
	t.Helper()
	content, err := os.ReadFile(composeFile)
	require.NoError(t, err)
	return content
}

func TestComposeShape(t *testing.T) {
	t.Parallel()
	project, err := load(t.Context(), t, readCompose(t), requiredEnv())
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"postgres", "temporal", "maestro"}, project.ServiceNames())

	postgres, err := project.GetService("postgres")
	require.NoError(t, err)
	require.Equal(t, "postgres:16", postgres.Image)
	require.NotNil(t, postgres.HealthCheck)
	require.NotEmpty(t, postgres.HealthCheck.Test)
	require.Contains(t, project.Volumes, "postgres-data")
	require.Contains(t, postgres.Volumes, types.ServiceVolumeConfig{
		Type: types.VolumeTypeVolume, Source: "postgres-data", Target: "/var/lib/postgresql/data",
		Volume: &types.ServiceVolumeVolume{},
	})

	temporal, err := project.GetService("temporal")
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(temporal.Image, "temporalio/auto-setup:"), temporal.Image)
	require.Equal(t, "postgres12", env(t, temporal, "DB"))
	require.Equal(t, "postgres", env(t, temporal, "POSTGRES_SEEDS"))
	require.Equal(t, "5432", env(t, temporal, "DB_PORT"))
	require.Equal(t, "s3cret", env(t, temporal, "POSTGRES_PWD"))
	require.Equal(t, types.ServiceConditionHealthy, temporal.DependsOn["postgres"].Condition)

	maestro, err := project.GetService("maestro")
	require.NoError(t, err)
	require.NotNil(t, maestro.Build)
	require.Equal(t, project.WorkingDir, maestro.Build.Context)
	require.FileExists(t, filepath.Join(maestro.Build.Context, maestro.Build.Dockerfile))
	require.ElementsMatch(t, []string{"postgres", "temporal"}, maestro.GetDependencies())
	require.Equal(t, types.ServiceConditionHealthy, maestro.DependsOn["postgres"].Condition)

	require.Equal(t, "postgres://maestro:s3cret@postgres:5432/maestro?sslmode=disable", env(t, maestro, "DATABASE_URL"))
	require.Equal(t, "temporal:7233", env(t, maestro, "TEMPORAL_ADDRESS"))
	require.Equal(t, "0.0.0.0:8080", env(t, maestro, "MAESTRO_HTTP_ADDR"))
	for _, name := range []string{"TWILIO_ACCOUNT_SID", "TWILIO_AUTH_TOKEN", "TWILIO_FROM", "SES_REGION", "SES_FROM"} {
		require.Equal(t, requiredEnv()[name], env(t, maestro, name), name)
	}

	catalog := env(t, maestro, "MAESTRO_CATALOG")
	require.Contains(t, maestro.Configs, types.ServiceConfigObjConfig{Source: "catalog", Target: catalog})
	require.Contains(t, project.Configs, "catalog")

	require.Len(t, maestro.Ports, 1)
	require.Equal(t, uint32(8080), maestro.Ports[0].Target)
	require.Equal(t, "8080", maestro.Ports[0].Published)
}

func env(t *testing.T, s types.ServiceConfig, name string) string {
	t.Helper()
	v, ok := s.Environment[name]
	require.True(t, ok, "%s has no %s", s.Name, name)
	require.NotNil(t, v, "%s has %s unset", s.Name, name)
	return *v
}

// TestComposeRejects proves the loader would catch a broken file, so the
// shape test above is checking a file the loader fully understood.
func TestComposeRejects(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		edit    func(model map[string]any)
		env     func(types.Mapping)
		wantErr string
	}{
		"dangling depends_on": {
			edit: func(model map[string]any) {
				maestro := model["services"].(map[string]any)["maestro"].(map[string]any)
				maestro["depends_on"].(map[string]any)["ghost"] = map[string]any{"condition": "service_started"}
			},
			wantErr: `depends on undefined service "ghost"`,
		},
		"missing secret": {
			env:     func(e types.Mapping) { delete(e, "TWILIO_AUTH_TOKEN") },
			wantErr: "set TWILIO_AUTH_TOKEN",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			content := readCompose(t)
			if tc.edit != nil {
				var model map[string]any
				require.NoError(t, yaml.Unmarshal(content, &model))
				tc.edit(model)
				var err error
				content, err = yaml.Marshal(model)
				require.NoError(t, err)
			}
			e := requiredEnv()
			if tc.env != nil {
				tc.env(e)
			}
			_, err := load(t.Context(), t, content, e)
			require.ErrorContains(t, err, tc.wantErr)
		})
	}
}

// TestDockerfile checks what compose cannot: the image builds the worker
// with the module's Go version and runs it as a non-root user.
func TestDockerfile(t *testing.T) {
	t.Parallel()
	dockerfile, err := os.ReadFile("../Dockerfile")
	require.NoError(t, err)
	goMod, err := os.ReadFile("../go.mod")
	require.NoError(t, err)

	froms := regexp.MustCompile(`(?m)^FROM\s+(\S+)`).FindAllStringSubmatch(string(dockerfile), -1)
	require.GreaterOrEqual(t, len(froms), 2, "want a multi-stage build")

	builder := froms[0][1]
	goVersion := regexp.MustCompile(`(?m)^go\s+(\d+\.\d+)`).FindStringSubmatch(string(goMod))
	require.NotNil(t, goVersion)
	require.Equal(t, "golang:"+goVersion[1], builder)
	require.Contains(t, string(dockerfile), "./cmd/worker")
	require.DirExists(t, "../cmd/worker")

	final := string(dockerfile[strings.LastIndex(string(dockerfile), "\nFROM "):])
	require.Contains(t, froms[len(froms)-1][1], "distroless/static")
	user := regexp.MustCompile(`(?m)^USER\s+(\S+)`).FindStringSubmatch(final)
	require.NotNil(t, user, "final stage sets no USER")
	require.NotContains(t, []string{"root", "0", "root:root", "0:0"}, user[1])
	require.Regexp(t, `(?m)^ENTRYPOINT \[".*/maestro-worker"\]`, final)
}
