module github.com/dshsim/dshsim

go 1.26.0

require (
	github.com/creack/pty v1.1.24
	github.com/evanw/esbuild v0.28.2
	github.com/google/go-cmp v0.7.0
	github.com/joshdk/go-junit v1.0.0
	github.com/landlock-lsm/go-landlock v0.11.2
	github.com/rogpeppe/go-internal v1.16.0
	github.com/sebdah/goldie/v2 v2.8.0
	go.yaml.in/yaml/v3 v3.0.6
	golang.org/x/image v0.48.0
	golang.org/x/sys v0.50.0
)

require (
	github.com/pmezard/go-difflib v1.0.0 // indirect
	github.com/sergi/go-diff v1.0.0 // indirect
	golang.org/x/tools v0.26.0 // indirect
	kernel.org/pub/linux/libs/security/libcap/psx v1.2.78 // indirect
)
