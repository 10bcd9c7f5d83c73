module github.com/tsinspect/tsinspect

go 1.26.8

require (
	github.com/andybalholm/brotli v1.2.8
	github.com/elazarl/goproxy v1.9.2
	github.com/gdamore/tcell/v2 v2.13.10
	github.com/gopacket/gopacket v1.7.7
	github.com/klauspost/compress v1.20.3
	github.com/mattn/go-sqlite3 v1.14.53
	github.com/rivo/tview v0.42.0
	golang.org/x/crypto v0.51.0
	golang.org/x/sys v0.45.0
)

require (
	github.com/gdamore/encoding v1.0.1 // indirect
	github.com/lucasb-eyer/go-colorful v1.3.0 // indirect
	github.com/rivo/uniseg v0.4.7 // indirect
	golang.org/x/net v0.55.0 // indirect
	golang.org/x/term v0.43.0 // indirect
	golang.org/x/text v0.37.0 // indirect
)
