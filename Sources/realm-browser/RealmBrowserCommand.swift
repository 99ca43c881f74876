import RealmStorage

/// Entry point. Until the terminal browser lands, this reports what the engine can already do.
@main
struct RealmBrowserCommand {
    static func main() {
        print("""
        realm-browser: the terminal browser is not built yet.
        The storage engine (module RealmStorage) is; run `swift test` to exercise it
        and `swift run -c release realm-bench` to measure it against SQLite.
        """)
    }
}
