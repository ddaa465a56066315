package ledger

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// onPgxConn runs fn on a pooled connection's pgx connection, for the
// pipelines database/sql cannot send; ran is false, and fn is not run,
// under another driver. fn commits what it keeps: a transaction it leaves
// open, because it failed or kept nothing, is rolled back before the
// connection returns to the pool, or the connection is dropped.
func (l *ledger) onPgxConn(ctx context.Context, fn func(*pgx.Conn) error) (ran bool, err error) {
	conn, err := l.db.Conn(ctx)
	if err != nil {
		return false, fmt.Errorf("error getting a connection: %w", err)
	}
	defer conn.Close()
	err = conn.Raw(func(dc any) error {
		sc, ok := dc.(*stdlib.Conn)
		if !ok {
			return nil
		}
		ran = true
		pc := sc.Conn()
		err := fn(pc)
		if pc.PgConn().TxStatus() != 'I' {
			if _, rerr := pc.Exec(context.WithoutCancel(ctx), "ROLLBACK"); rerr != nil {
				return errors.Join(err, rerr, driver.ErrBadConn)
			}
		}
		return err
	})
	return ran, err
}
