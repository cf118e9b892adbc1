package fleet

import (
	"github.com/spf13/cobra"

	"github.com/ledgerbench/ledgerbench/internal/fleetcmd"
)

// Commands are agent and fleet migrate of the program named name, for
// benchctl.Config's Commands; linking the package lets ab and bisect
// connect to a fleet (--fleet).
func Commands(name string) []*cobra.Command { return fleetcmd.Commands(name) }
