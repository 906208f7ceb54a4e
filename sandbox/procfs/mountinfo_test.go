package procfs

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseMountInfo(t *testing.T) {
	text := "27 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n" +
		"30 27 254:0 /etc /var/tmp/my\\040ws rw,relatime shared:1 master:2 - ext4 /dev/vda rw\n" +
		"31 27 0:27 / /tmp rw - tmpfs tmpfs rw,size=4k\n"
	got, err := ParseMountInfo(text)
	if err != nil {
		t.Fatal(err)
	}
	want := []Mount{
		{Dev: "254:0", Root: "/", Point: "/", FSType: "ext4", Source: "/dev/vda"},
		{Dev: "254:0", Root: "/etc", Point: "/var/tmp/my ws", FSType: "ext4", Source: "/dev/vda"},
		{Dev: "0:27", Root: "/", Point: "/tmp", FSType: "tmpfs", Source: "tmpfs"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	for _, bad := range []string{"27 1 254:0 / / rw", "27 1 254:0 / / rw - ext4", "x"} {
		if _, err := ParseMountInfo("27 1 254:0 / / rw - ext4 /dev/vda rw\n" + bad + "\n"); err == nil || !strings.HasPrefix(err.Error(), "mountinfo line 2: ") {
			t.Errorf("ParseMountInfo(line %q) error = %v, want one naming line 2", bad, err)
		}
	}
	if got := unescapeMount(`a\134b\011c\012d\040e\9`); got != "a\\b\tc\nd e\\9" {
		t.Errorf("unescapeMount = %q", got)
	}
}
