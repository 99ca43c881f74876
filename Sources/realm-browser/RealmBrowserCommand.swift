import RealmStorage

#if canImport(Glibc)
import Glibc
#endif

/// Entry point. Until the terminal browser lands, this reports what the engine can already do:
/// with a database path it prints the schema, the object counts and the result of `verify()`.
@main
struct RealmBrowserCommand {
    static func main() {
        let args = Array(CommandLine.arguments.dropFirst())
        if args.isEmpty || args.contains("--help") || args.contains("-h") {
            print("""
            usage: realm-browser [PATH]

            The terminal browser is not built yet. The storage engine (module RealmStorage) is:
              realm-browser PATH   print the schema, object counts and a full verify() of a database
              swift test           exercise the engine
              swift run -c release realm-bench   measure it against SQLite
            """)
            return
        }
        guard args.count == 1 else {
            printError("realm-browser: expected one database path, got \(args.count) arguments")
            exit(2)
        }
        do {
            let db = try Database.open(path: args[0], options: DatabaseOptions(readOnly: true))
            try db.read { s in
                print("\(args[0]): version \(s.version), schema version \(s.schemaVersion)")
                for c in s.schema {
                    print("  \(c.name): \(try s.count(c.name)) objects")
                    for p in c.properties {
                        var type = p.type == .link ? (p.objectClassName ?? "?") : p.type.description
                        if p.type == .linkingObjects { type = "<- \(p.objectClassName ?? "?").\(p.originProperty ?? "?")" }
                        if p.isList && p.type != .linkingObjects { type = "[\(type)]" }
                        if p.isOptional { type += "?" }
                        let flags = (p.isPrimaryKey ? " primary key" : "") + (p.isIndexed ? " indexed" : "")
                        print("    \(p.name): \(type)\(flags)")
                    }
                }
            }
            let report = try db.verify()
            print(report)
            exit(report.isOK ? 0 : 1)
        } catch {
            printError("realm-browser: \(error)")
            exit(1)
        }
    }
}

/// Writes a line to standard error (the C global `stderr` is not concurrency-safe in Swift 6).
func printError(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
}
