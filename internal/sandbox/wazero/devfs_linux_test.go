package wazero

import (
	"testing"

	"golang.org/x/sys/unix"
)

// deviceMinors are the host's own devices' minor numbers, in deviceNames'
// order: the native guest's /dev binds these nodes, so its st_rdev is
// theirs.
func TestDeviceMinorsAreTheHosts(t *testing.T) {
	if len(deviceMinors) != len(deviceNames) {
		t.Fatalf("%d minors for %d devices", len(deviceMinors), len(deviceNames))
	}
	for i, name := range deviceNames {
		var st unix.Stat_t
		if err := unix.Stat("/dev/"+name, &st); err != nil {
			t.Fatal(err)
		}
		if major, minor := unix.Major(st.Rdev), unix.Minor(st.Rdev); major != 1 || minor != uint32(deviceMinors[i]) {
			t.Errorf("/dev/%s is (%d, %d), deviceMinors says (1, %d)", name, major, minor, deviceMinors[i])
		}
		if deviceMinors[i] > 0xf {
			t.Errorf("/dev/%s: minor %d does not fit viewDev's four bits", name, deviceMinors[i])
		}
	}
}
