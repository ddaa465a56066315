package deploy_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/loader"
	"github.com/compose-spec/compose-go/v2/types"
	"github.com/stretchr/testify/require"
	"go.temporal.io/server/common/dynamicconfig"
	temporalschema "go.temporal.io/server/schema"
	"gopkg.in/yaml.v3"

	"github.com/maestro-run/maestro/internal/server"
	"github.com/maestro-run/maestro/tools"
)

const (
	composeFile    = "../../docker-compose.yml"
	exampleCatalog = "../../docs/deploy/catalog.example.yaml"
)

// requiredEnv is what an operator must provide whatever the catalog: the
// compose file has no defaults for secrets.
func requiredEnv() types.Mapping {
	return types.Mapping{
		"POSTGRES_PASSWORD":  "s3cret",
		"MAESTRO_CODEC_KEYS": "k1=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
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

func service(t *testing.T, p *types.Project, name string) types.ServiceConfig {
	t.Helper()
	s, err := p.GetService(name)
	require.NoError(t, err)
	return s
}

// maestroServices are the compose services that run maestro, one per role.
var maestroServices = []string{"maestro-api", "maestro-worker"}

func TestComposeShape(t *testing.T) {
	t.Parallel()
	project, err := load(t.Context(), t, readCompose(t), requiredEnv())
	require.NoError(t, err)
	require.ElementsMatch(t, append([]string{"postgres", "temporal-schema", "temporal", "temporal-namespace"}, maestroServices...), project.ServiceNames())

	postgres := service(t, project, "postgres")
	require.Equal(t, "postgres:16", postgres.Image)
	require.NotNil(t, postgres.HealthCheck)
	require.NotEmpty(t, postgres.HealthCheck.Test)
	require.Contains(t, project.Volumes, "postgres-data")
	require.Contains(t, postgres.Volumes, types.ServiceVolumeConfig{
		Type: types.VolumeTypeVolume, Source: "postgres-data", Target: "/var/lib/postgresql/data",
		Volume: &types.ServiceVolumeVolume{},
	})

	for _, name := range maestroServices {
		maestro := service(t, project, name)
		require.NotNil(t, maestro.Build, name)
		require.Equal(t, project.WorkingDir, maestro.Build.Context)
		require.FileExists(t, filepath.Join(maestro.Build.Context, maestro.Build.Dockerfile))
		require.ElementsMatch(t, []string{"postgres", "temporal", "temporal-namespace"}, maestro.GetDependencies(), name)
		require.Equal(t, types.ServiceConditionHealthy, maestro.DependsOn["postgres"].Condition)
		require.Equal(t, types.ServiceConditionHealthy, maestro.DependsOn["temporal"].Condition)
		require.Equal(t, types.ServiceConditionCompletedSuccessfully, maestro.DependsOn["temporal-namespace"].Condition,
			"%s needs the namespace to exist", name)

		require.Equal(t, "postgres://maestro:s3cret@postgres:5432/maestro?sslmode=disable", env(t, maestro, "DATABASE_URL"))
		require.Equal(t, "temporal:7233", env(t, maestro, "TEMPORAL_ADDRESS"))
		require.Equal(t, "0.0.0.0:8080", env(t, maestro, "MAESTRO_HTTP_ADDR"))
		require.Equal(t, requiredEnv()["MAESTRO_CODEC_KEYS"], env(t, maestro, "MAESTRO_CODEC_KEYS"))

		catalog := env(t, maestro, "MAESTRO_CATALOG")
		require.Contains(t, maestro.Configs, types.ServiceConfigObjConfig{Source: "catalog", Target: catalog})
	}
	require.Contains(t, project.Configs, "catalog")

	// One API process takes the agents' calls; the workers, two to start
	// with, run them and publish nothing.
	api := service(t, project, "maestro-api")
	require.Equal(t, string(server.RoleAPI), env(t, api, "MAESTRO_ROLE"))
	require.Len(t, api.Ports, 1)
	require.Equal(t, uint32(8080), api.Ports[0].Target)
	require.Equal(t, "8080", api.Ports[0].Published)
	worker := service(t, project, "maestro-worker")
	require.Equal(t, string(server.RoleWorker), env(t, worker, "MAESTRO_ROLE"))
	require.Empty(t, worker.Ports)
	require.NotNil(t, worker.Deploy)
	require.NotNil(t, worker.Deploy.Replicas)
	require.Equal(t, 2, *worker.Deploy.Replicas)
}

// temporalLine is the major.minor of the Temporal server module maestro
// embeds and tests against, e.g. "1.32".
func temporalLine(t *testing.T) string {
	t.Helper()
	goMod, err := os.ReadFile("../../go.mod")
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^\s*go\.temporal\.io/server v(\d+\.\d+)\.\d+`).FindSubmatch(goMod)
	require.NotNil(t, m, "go.mod requires no go.temporal.io/server")
	return string(m[1])
}

// TestComposeRunsTemporalFromItsCurrentImages: the server image with a
// one-shot schema job before it and a one-shot namespace job after it,
// all on the release line maestro is tested against; the deprecated
// auto-setup image is gone.
func TestComposeRunsTemporalFromItsCurrentImages(t *testing.T) {
	t.Parallel()
	project, err := load(t.Context(), t, readCompose(t), requiredEnv())
	require.NoError(t, err)
	schemaJob := service(t, project, "temporal-schema")
	temporal := service(t, project, "temporal")
	namespaceJob := service(t, project, "temporal-namespace")

	line := temporalLine(t)
	tag := regexp.MustCompile(`^temporalio/(server|admin-tools):(\d+\.\d+)\.\d+$`)
	for _, s := range project.Services {
		require.NotContains(t, s.Image, "auto-setup", "%s uses the deprecated auto-setup image", s.Name)
	}
	for _, s := range []types.ServiceConfig{schemaJob, temporal, namespaceJob} {
		m := tag.FindStringSubmatch(s.Image)
		require.NotNil(t, m, "%s: want a pinned temporalio/server or admin-tools image, got %q", s.Name, s.Image)
		require.Equal(t, line, m[2], "%s: %s is not on the %s line maestro embeds", s.Name, s.Image, line)
	}
	require.True(t, strings.HasPrefix(temporal.Image, "temporalio/server:"), temporal.Image)
	require.Equal(t, strings.TrimPrefix(temporal.Image, "temporalio/server:"), strings.TrimPrefix(schemaJob.Image, "temporalio/admin-tools:"),
		"the schema job sets up the schema of the server it runs before")

	// The schema job: both databases, created if missing, set up and
	// updated to the schemas this Temporal version embeds.
	require.Equal(t, types.ServiceConditionHealthy, schemaJob.DependsOn["postgres"].Condition)
	require.Equal(t, "postgres12", env(t, schemaJob, "SQL_PLUGIN"))
	require.Equal(t, "postgres", env(t, schemaJob, "SQL_HOST"))
	require.Equal(t, "5432", env(t, schemaJob, "SQL_PORT"))
	require.Equal(t, "maestro", env(t, schemaJob, "SQL_USER"))
	require.Equal(t, "s3cret", env(t, schemaJob, "SQL_PASSWORD"))
	script := strings.Join(append(append([]string{}, schemaJob.Entrypoint...), schemaJob.Command...), " ")
	for _, want := range []string{"temporal temporal_visibility", `temporal-sql-tool --db "$db" create`, "setup-schema -v 0.0", `update-schema --schema-name "$schema"`} {
		require.Contains(t, script, want)
	}
	for _, name := range []string{"postgresql/v12/temporal", "postgresql/v12/visibility"} {
		require.Contains(t, script, name)
		_, err := fs.Stat(temporalschema.Assets(), name+"/versioned")
		require.NoError(t, err, "Temporal %s embeds no schema %s", line, name)
	}

	// The server starts once the schema job succeeded, on the same
	// database, with the dynamic configuration compose gives it.
	require.Equal(t, types.ServiceConditionCompletedSuccessfully, temporal.DependsOn["temporal-schema"].Condition)
	require.Equal(t, "postgres12", env(t, temporal, "DB"))
	require.Equal(t, "postgres", env(t, temporal, "POSTGRES_SEEDS"))
	require.Equal(t, "5432", env(t, temporal, "DB_PORT"))
	require.Equal(t, "maestro", env(t, temporal, "POSTGRES_USER"))
	require.Equal(t, "s3cret", env(t, temporal, "POSTGRES_PWD"))
	require.NotNil(t, temporal.HealthCheck)
	dynamic := env(t, temporal, "DYNAMIC_CONFIG_FILE_PATH")
	require.Len(t, temporal.Configs, 1)
	require.Equal(t, dynamic, temporal.Configs[0].Target)
	cfg, ok := project.Configs[temporal.Configs[0].Source]
	require.True(t, ok)
	loaded := dynamicconfig.LoadYamlFile([]byte(cfg.Content))
	require.Empty(t, loaded.Errors)
	require.Empty(t, loaded.Warnings, "every key must be one Temporal %s knows", line)
	require.NotEmpty(t, loaded.Map)

	// The namespace job registers the namespace maestro runs in.
	require.Equal(t, types.ServiceConditionHealthy, namespaceJob.DependsOn["temporal"].Condition)
	require.Equal(t, "temporal:7233", env(t, namespaceJob, "TEMPORAL_ADDRESS"))
	for _, name := range maestroServices {
		maestro := service(t, project, name)
		require.Equal(t, env(t, maestro, "TEMPORAL_ADDRESS"), env(t, namespaceJob, "TEMPORAL_ADDRESS"))
		require.Equal(t, env(t, maestro, "TEMPORAL_NAMESPACE"), env(t, namespaceJob, "TEMPORAL_NAMESPACE"))
	}
	script = strings.Join(append(append([]string{}, namespaceJob.Entrypoint...), namespaceJob.Command...), " ")
	require.Contains(t, script, `temporal operator namespace create --address "$TEMPORAL_ADDRESS" -n "$TEMPORAL_NAMESPACE"`)

	withNamespace := requiredEnv()
	withNamespace["TEMPORAL_NAMESPACE"] = "maestro-prod"
	project, err = load(t.Context(), t, readCompose(t), withNamespace)
	require.NoError(t, err)
	for _, name := range maestroServices {
		require.Equal(t, "maestro-prod", env(t, service(t, project, name), "TEMPORAL_NAMESPACE"))
	}
	require.Equal(t, "maestro-prod", env(t, service(t, project, "temporal-namespace"), "TEMPORAL_NAMESPACE"))
}

// TestComposeSuppliesWhatTheCatalogRequires renders the compose file with
// the environment an operator sets for the catalog it mounts: every
// provider setting maestro requires for that catalog, as the server itself
// decides, reaches the maestro service.
func TestComposeSuppliesWhatTheCatalogRequires(t *testing.T) {
	t.Parallel()
	project, err := load(t.Context(), t, readCompose(t), requiredEnv())
	require.NoError(t, err)
	example, err := filepath.Abs(exampleCatalog)
	require.NoError(t, err)
	require.Equal(t, example, project.Configs["catalog"].File, "compose mounts the example catalog unless told otherwise")

	cat, err := tools.LoadFile(example)
	require.NoError(t, err)
	require.Empty(t, cat.DemoKeyHolders(), "the production example must not hold the published demo keys")
	settings := server.RequiredProviderSettings(cat)
	require.NotEmpty(t, settings)

	env := requiredEnv()
	var httpTokens []string
	for _, s := range settings {
		env[s.Env] = "value-of-" + s.Env
		if strings.HasPrefix(s.Env, "MAESTRO_HTTP_SERVICE_") {
			token := strings.TrimSuffix(s.Env, "_URL") + "_TOKEN"
			env[token] = "value-of-" + token
			httpTokens = append(httpTokens, token)
		}
	}
	for _, optional := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "MAESTRO_PUBLIC_URL"} {
		env[optional] = "value-of-" + optional
	}
	project, err = load(t.Context(), t, readCompose(t), env)
	require.NoError(t, err)
	for _, svc := range maestroServices {
		maestro := service(t, project, svc)
		for _, s := range settings {
			require.Equal(t, "value-of-"+s.Env, valueOf(maestro, s.Env), "compose does not pass %s to %s, which tools %v need", s.Env, svc, s.Tools)
		}
		for _, name := range append(httpTokens, "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "MAESTRO_PUBLIC_URL") {
			require.Equal(t, "value-of-"+name, valueOf(maestro, name), "compose does not pass %s to %s", name, svc)
		}
	}

	// Nothing the catalog leaves unused is demanded: with only the
	// secrets set, compose still renders, and the provider settings stay
	// unset for maestro to judge against the catalog.
	project, err = load(t.Context(), t, readCompose(t), requiredEnv())
	require.NoError(t, err)
	for _, svc := range maestroServices {
		for _, s := range settings {
			require.Empty(t, valueOf(service(t, project, svc), s.Env), "compose invents a value for %s in %s", s.Env, svc)
		}
	}

	// Another catalog is mounted when named.
	other := requiredEnv()
	other["MAESTRO_CATALOG_FILE"] = "./mine.yaml"
	project, err = load(t.Context(), t, readCompose(t), other)
	require.NoError(t, err)
	require.Equal(t, filepath.Join(project.WorkingDir, "mine.yaml"), project.Configs["catalog"].File)
}

func env(t *testing.T, s types.ServiceConfig, name string) string {
	t.Helper()
	v, ok := s.Environment[name]
	require.True(t, ok, "%s has no %s", s.Name, name)
	require.NotNil(t, v, "%s has %s unset", s.Name, name)
	return *v
}

// valueOf is a variable's value in the service, "" when unset.
func valueOf(s types.ServiceConfig, name string) string {
	if v := s.Environment[name]; v != nil {
		return *v
	}
	return ""
}

// TestComposeRejects proves the loader would catch a broken file, so the
// shape tests above are checking a file the loader fully understood.
func TestComposeRejects(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		edit    func(model map[string]any)
		env     func(types.Mapping)
		wantErr string
	}{
		"dangling depends_on": {
			edit: func(model map[string]any) {
				maestro := model["services"].(map[string]any)["maestro-worker"].(map[string]any)
				maestro["depends_on"].(map[string]any)["ghost"] = map[string]any{"condition": "service_started"}
			},
			wantErr: `depends on undefined service "ghost"`,
		},
		"missing secret": {
			env:     func(e types.Mapping) { delete(e, "POSTGRES_PASSWORD") },
			wantErr: "set POSTGRES_PASSWORD",
		},
		"missing codec keys": {
			env:     func(e types.Mapping) { delete(e, "MAESTRO_CODEC_KEYS") },
			wantErr: "set MAESTRO_CODEC_KEYS",
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
