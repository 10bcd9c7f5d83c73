package importer

import (
	"os/exec"
	"strings"
	"testing"
)

// TestOutsideLibrariesStayInOnePackage holds the rule that each outside
// library is imported by one package only: gopacket by importer/pcap,
// golang.org/x/crypto by importer/tlsrec, the YAML library by importer/vcr.
func TestOutsideLibrariesStayInOnePackage(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "github.com/tsinspect/tsinspect/...").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	owners := map[string]string{
		"github.com/gopacket/gopacket": "github.com/tsinspect/tsinspect/importer/pcap",
		"golang.org/x/crypto":          "github.com/tsinspect/tsinspect/importer/tlsrec",
		"gopkg.in/yaml.v3":             "github.com/tsinspect/tsinspect/importer/vcr",
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		for _, imp := range f[1:] {
			for lib, owner := range owners {
				if (imp == lib || strings.HasPrefix(imp, lib+"/")) && f[0] != owner {
					t.Errorf("%s imports %s; only %s may", f[0], imp, owner)
				}
			}
		}
	}
}
