package devtemporal

import (
	"fmt"
	"path/filepath"

	"go.temporal.io/server/common/cluster"
	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/dynamicconfig"
	"go.temporal.io/server/common/membership/static"
	sqliteplugin "go.temporal.io/server/common/persistence/sql/sqlplugin/sqlite"
	"go.temporal.io/server/common/primitives"
	sqliteschema "go.temporal.io/server/schema/sqlite"

	"github.com/maestro-run/maestro/internal/privatefs"
)

const (
	clusterName = "active"
	storeName   = "sqlite"
	dbFileName  = "temporal.db"
	// Visibility has a file of its own: SQLite lets one connection write a
	// file at a time, and the server gives each store one connection, so a
	// shared file would queue every workflow's history writes behind the
	// search index's, which cost as much again (ADR 8).
	visibilityStoreName  = "sqlite-visibility"
	visibilityDBFileName = "visibility.db"
)

// openStores prepares the history and visibility files under dataDir and
// registers namespace, returning the connection settings of each.
func openStores(dataDir, namespace string) (history, visibility *config.SQL, err error) {
	if err := privatefs.MkdirAll(dataDir); err != nil {
		return nil, nil, fmt.Errorf("error creating data directory: %w", err)
	}
	if history, err = openFile(filepath.Join(dataDir, dbFileName)); err != nil {
		return nil, nil, err
	}
	if err := registerNamespace(history, namespace); err != nil {
		return nil, nil, err
	}
	// A data directory from before visibility had its own file keeps its
	// old search index in temporal.db; listings start afresh here.
	if visibility, err = openFile(filepath.Join(dataDir, visibilityDBFileName)); err != nil {
		return nil, nil, err
	}
	return history, visibility, nil
}

// openFile returns the settings for one SQLite file, creating the schema
// the first time. The schema holds both stores' tables; each file uses
// its own.
func openFile(path string) (*config.SQL, error) {
	sql := &config.SQL{
		PluginName:   sqliteplugin.PluginName,
		DatabaseName: path,
		ConnectAttributes: map[string]string{
			"mode": "rwc",
			// WAL lets reads proceed while history is written. Under WAL,
			// NORMAL sync stays consistent after a crash and can lose only
			// the last commits on power loss: the right trade for dev mode.
			"journal_mode": "wal",
			"synchronous":  "normal",
		},
	}

	// The file is made private before SQLite opens it, so its -wal and
	// -shm files are private too.
	fresh, err := privatefs.SQLiteFile(path)
	if err != nil {
		return nil, err
	}
	if fresh {
		if err := sqliteschema.SetupSchema(sql); err != nil {
			return nil, fmt.Errorf("error setting up schema in %s: %w", path, err)
		}
	}
	return sql, nil
}

// registerNamespace writes namespace into the store before the server
// starts, so it is there when the server first loads its namespaces. The
// helper lives with the SQLite schema but speaks to any SQL plugin.
func registerNamespace(sql *config.SQL, namespace string) error {
	ns, err := sqliteschema.NewNamespaceConfig(clusterName, namespace, false, nil)
	if err != nil {
		return fmt.Errorf("error building namespace %q: %w", namespace, err)
	}
	if err := sqliteschema.CreateNamespaces(sql, ns); err != nil {
		return fmt.Errorf("error registering namespace %q: %w", namespace, err)
	}
	return nil
}

// openPersistence prepares the configured store and returns the server's
// persistence settings for it.
func openPersistence(c Config) (config.Persistence, error) {
	if c.Postgres != nil {
		history, visibility, err := openPostgres(*c.Postgres, serverLogger{l: c.Logger})
		if err != nil {
			return config.Persistence{}, err
		}
		if err := registerNamespace(history, c.Namespace); err != nil {
			return config.Persistence{}, err
		}
		return config.Persistence{
			DefaultStore:     "postgres",
			VisibilityStore:  "postgres-visibility",
			NumHistoryShards: int32(c.Postgres.Shards),
			DataStores: map[string]config.DataStore{
				"postgres":            {SQL: history},
				"postgres-visibility": {SQL: visibility},
			},
		}, nil
	}
	history, visibility, err := openStores(c.DataDir, c.Namespace)
	if err != nil {
		return config.Persistence{}, err
	}
	return config.Persistence{
		DefaultStore:    storeName,
		VisibilityStore: visibilityStoreName,
		// Shard count is fixed when the database is created; one shard is
		// plenty for a single developer.
		NumHistoryShards: 1,
		DataStores: map[string]config.DataStore{
			storeName:           {SQL: history},
			visibilityStoreName: {SQL: visibility},
		},
	}, nil
}

func serverConfig(c Config, persistence config.Persistence) *config.Config {
	frontend := c.frontendAddr()
	service := func(host string, offset int) config.Service {
		return config.Service{RPC: config.RPC{GRPCPort: c.Port + offset, BindOnIP: host}}
	}
	return &config.Config{
		Persistence: persistence,
		ClusterMetadata: &cluster.Config{
			FailoverVersionIncrement: 10,
			MasterClusterName:        clusterName,
			CurrentClusterName:       clusterName,
			ClusterInformation: map[string]cluster.ClusterInformation{
				clusterName: {Enabled: true, InitialFailoverVersion: 1, RPCAddress: frontend},
			},
		},
		DCRedirectionPolicy: config.DCRedirectionPolicy{Policy: "noop"},
		Services: map[string]config.Service{
			string(primitives.FrontendService): service(c.Host, frontendOffset),
			string(primitives.HistoryService):  service(loopback, historyOffset),
			string(primitives.MatchingService): service(loopback, matchingOffset),
			string(primitives.WorkerService):   service(loopback, workerOffset),
		},
		Archival: config.Archival{
			History:    config.HistoryArchival{State: "disabled"},
			Visibility: config.VisibilityArchival{State: "disabled"},
		},
		NamespaceDefaults: config.NamespaceDefaults{
			Archival: config.ArchivalNamespaceDefaults{
				History:    config.HistoryArchivalNamespaceDefaults{State: "disabled"},
				Visibility: config.VisibilityArchivalNamespaceDefaults{State: "disabled"},
			},
		},
		// The worker service talks to the frontend through this client.
		PublicClient: config.PublicClient{HostPort: frontend},
	}
}

// staticHosts replaces ringpop: every service lives in this process at a
// known address, so there is no ring to join and no stale member from a
// previous run to wait out.
func staticHosts(c Config) map[primitives.ServiceName]static.Hosts {
	return map[primitives.ServiceName]static.Hosts{
		primitives.FrontendService: static.SingleLocalHost(c.frontendAddr()),
		primitives.HistoryService:  static.SingleLocalHost(c.internalAddr(historyOffset)),
		primitives.MatchingService: static.SingleLocalHost(c.internalAddr(matchingOffset)),
		primitives.WorkerService:   static.SingleLocalHost(c.internalAddr(workerOffset)),
	}
}

// transferPollRPS bounds how often a shard reads its transfer queue: a
// read costs one query, issued only when tasks were written.
const transferPollRPS = 1000

// dynamicConfig keeps the server's defaults except where a single-node server
// behaves better with a different value.
func dynamicConfig() dynamicconfig.StaticClient {
	return dynamicconfig.StaticClient{
		// Partitions spread load across matching hosts; with one host they
		// only add forwarding hops between a task and its poller.
		dynamicconfig.MatchingNumTaskqueueReadPartitions.Key():  1,
		dynamicconfig.MatchingNumTaskqueueWritePartitions.Key(): 1,
		// The default sizes the cache for a production host; this bounds the
		// memory a long-running dev server can grow to.
		dynamicconfig.HistoryCacheHostLevelMaxSize.Key(): 8192,
		// Listing workflows from a UI or CLI easily exceeds the default.
		dynamicconfig.FrontendMaxNamespaceVisibilityRPSPerInstance.Key(): 100,
		// The default reads a shard's transfer queue at most 20 times a
		// second, which a cluster of many shards never notices; with one
		// shard every workflow task a completed activity schedules, and
		// so every call, waits up to 50 ms for the next read (ADR 8).
		dynamicconfig.TransferProcessorMaxPollRPS.Key(): transferPollRPS,
	}
}
