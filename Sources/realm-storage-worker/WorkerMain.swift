#if canImport(Glibc)
import Glibc
#endif
import RealmStorage

/// A child process for the crash and multi-process tests. Output is line-oriented and written straight to
/// file descriptor 1 (no buffering), so a line is visible to the parent as soon as it is printed.
///
///     realm-storage-worker mixed PATH [--limit N] [--namespace NS] [--exit-without-closing]  (Mixed)
///     realm-storage-worker commit-loop PATH
///     realm-storage-worker writer PATH ID COUNT
///     realm-storage-worker reader PATH SECONDS [UNTIL]
///     realm-storage-worker acked-writer PATH ID
///     realm-storage-worker pin PATH
///     realm-storage-worker append-objects PATH CLASS PROPERTY COUNT
///     realm-storage-worker hold-writer PATH
///     realm-storage-worker write-then-idle PATH
///     realm-storage-worker durability SCENARIO PATH [ARGS]  (DurabilityScenarios)
///     realm-storage-worker create-compact-copy PATH
///     realm-storage-worker open-repeatedly PATH COUNT
///     realm-storage-worker check-files LIST [FIRST]
///
/// Options anywhere: `--key HEX` (an encrypted file), `--checkpoint-bytes N` (checkpoint the log every N bytes).
@main
struct WorkerMain {
    static func main() {
        var args = Array(CommandLine.arguments.dropFirst())
        // `--key HEX` anywhere: open the file encrypted with that 64-byte key.
        if let i = args.firstIndex(of: "--key"), i + 1 < args.count {
            let hex = Array(args[i + 1].utf8)
            workerOptions = DatabaseOptions(encryptionKey: stride(from: 0, to: hex.count - 1, by: 2).map {
                UInt8(String(decoding: hex[$0...$0 + 1], as: UTF8.self), radix: 16) ?? 0
            })
            args.removeSubrange(i...i + 1)
        }
        // `--checkpoint-bytes N` anywhere: checkpoint the commit log after N bytes of records.
        if let i = args.firstIndex(of: "--checkpoint-bytes"), i + 1 < args.count, let n = UInt64(args[i + 1]) {
            workerOptions.checkpointBytes = n
            args.removeSubrange(i...i + 1)
        }
        // `mixed`'s own options: run only steps 0..<N; number markers and items in namespace NS; end the process
        // without closing the database (as a crash after the last step would: no checkpoint on close).
        var limit = Int.max, namespace = 0, closes = true
        if let i = args.firstIndex(of: "--exit-without-closing") {
            closes = false
            args.remove(at: i)
        }
        if let i = args.firstIndex(of: "--limit"), i + 1 < args.count, let n = Int(args[i + 1]), n >= 0 {
            limit = n
            args.removeSubrange(i...i + 1)
        }
        if let i = args.firstIndex(of: "--namespace"), i + 1 < args.count, let n = Int(args[i + 1]), n >= 0 {
            namespace = n
            args.removeSubrange(i...i + 1)
        }
        do {
            switch (args.first, args.count) {
            case ("commit-loop", 2):
                try CommitLoop.run(path: args[1])
            case ("writer", 4):
                guard let id = Int(args[2]), let count = Int(args[3]), count >= 0 else { usage() }
                try SharedCounter.runWriter(path: args[1], id: id, count: count)
            case ("reader", 3), ("reader", 4):
                guard let seconds = Double(args[2]) else { usage() }
                let until = args.count == 4 ? Int(args[3]) : nil
                if args.count == 4 && until == nil { usage() }
                try SharedCounter.runReader(path: args[1], seconds: seconds, until: until)
            case ("acked-writer", 3):
                guard let id = Int(args[2]) else { usage() }
                try SharedCounter.runAckedWriter(path: args[1], id: id)
            case ("pin", 2):
                try SharedCounter.runPin(path: args[1])
            case ("hold-writer", 2):
                // Begins a write transaction, prints `holding`, and keeps it until killed.
                let db = try Database.open(path: args[1], options: workerOptions)
                let tx = try db.beginWrite()
                emit("holding")
                while true {
                    sleep(60)
                    withExtendedLifetime(tx) {}
                }
            case ("write-then-idle", 2):
                // Commits one shared-counter increment, prints `idle`, and keeps the database open until
                // killed: its writer lease stays with it until another process asks.
                let db = try Database.open(path: args[1], options: workerOptions)
                try SharedCounter.ensureSchema(db)
                try db.write { tx in try SharedCounter.increment(tx, writer: 99, seq: 0) }
                emit("idle")
                while true {
                    sleep(60)
                    withExtendedLifetime(db) {}
                }
            case ("durability", _):
                try DurabilityScenarios.run(Array(args.dropFirst()))
            case ("create-compact-copy", 2):
                try FileLifecycle.runCreateCompactCopy(path: args[1])
            case ("open-repeatedly", 3):
                guard let count = Int(args[2]), count > 100 else { usage() }
                FileLifecycle.runOpenRepeatedly(path: args[1], count: count)
            case ("check-files", 2), ("check-files", 3):
                let first = args.count == 3 ? Int(args[2]) : 0
                guard let first, first >= 0 else { usage() }
                try CheckFiles.run(list: args[1], first: first)
            case ("append-objects", 5):
                guard let count = Int(args[4]), count >= 0 else { usage() }
                try AppendObjects.run(path: args[1], className: args[2], property: args[3], count: count)
            case ("mixed", 2):
                try Mixed.run(path: args[1], limit: limit, ns: namespace, closes: closes)
            default:
                usage()
            }
        } catch {
            emitError("error: \(error)")
            exit(2)
        }
    }

    static func usage() -> Never {
        emitError("""
            usage: realm-storage-worker mixed PATH [--limit N] [--namespace NS] [--exit-without-closing]
                   realm-storage-worker commit-loop PATH
                   realm-storage-worker writer PATH ID COUNT
                   realm-storage-worker reader PATH SECONDS [UNTIL]
                   realm-storage-worker pin PATH
                   realm-storage-worker append-objects PATH CLASS PROPERTY COUNT
                   realm-storage-worker hold-writer PATH
                   realm-storage-worker write-then-idle PATH
                   realm-storage-worker create-compact-copy PATH
                   realm-storage-worker open-repeatedly PATH COUNT
                   realm-storage-worker check-files LIST [FIRST]
            """)
        exit(64)
    }
}

/// How every workload opens its file (`--key` sets the encryption key).
nonisolated(unsafe) var workerOptions = DatabaseOptions()

/// Writes one line to standard output, unbuffered.
func emit(_ line: String) { writeAll(1, line + "\n") }

/// Writes one line to standard error, unbuffered.
func emitError(_ line: String) { writeAll(2, line + "\n") }

private func writeAll(_ fd: Int32, _ text: String) {
    var bytes = Array(text.utf8)
    var done = 0
    while done < bytes.count {
        let n = bytes.withUnsafeMutableBytes { write(fd, $0.baseAddress! + done, $0.count - done) }
        if n < 0 {
            if errno == EINTR { continue }
            return
        }
        done += n
    }
}
