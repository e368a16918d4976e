package shepherdtest

// An Option changes how Start starts a server.
type Option func(*config)

// config is what the options set; the zero value plus defaults() is a single member with a
// temporary data directory (t.TempDir), on free ports.
type config struct {
	members  int
	port     int
	dataDir  string
	inMemory bool
	binary   string
	settings [][2]string
}

// Members makes an in-process ensemble of n members, numbered 1..n like ZooKeeper's myid,
// sharing one state; each has a client port of its own.
func Members(n int) Option { return func(c *config) { c.members = n } }

// Port asks for a client port (member i of an ensemble listens on port+i-1). The default, 0,
// picks free ports.
func Port(p int) Option { return func(c *config) { c.port = p } }

// DataDir keeps the data in dir instead of a temporary directory. Restart keeps the data
// either way; it is written with forceSync=no unless a Setting says otherwise, so it survives
// a restart, not a power cut.
func DataDir(dir string) Option { return func(c *config) { c.dataDir = dir; c.inMemory = false } }

// InMemory keeps everything in memory: the fastest start, but Restart then starts empty.
func InMemory() Option { return func(c *config) { c.inMemory = true; c.dataDir = "" } }

// Setting sets any zoo.cfg key (`shepherd serve --set KEY=VALUE`). An unknown key makes Start
// fail the test, naming the key.
func Setting(key, value string) Option {
	return func(c *config) { c.settings = append(c.settings, [2]string{key, value}) }
}

// Binary runs this shepherd binary instead of $SHEPHERD_BIN or the one on $PATH.
func Binary(path string) Option { return func(c *config) { c.binary = path } }
