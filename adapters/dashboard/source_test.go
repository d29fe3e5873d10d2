package dashboard

import "os"

func readSource(name string) (string, error) {
	b, err := os.ReadFile(name)
	return string(b), err
}
