import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What a process did to the files of one directory, in order, read from an `strace` log (`-f -X raw -yy
/// -e write=all`): every write with its bytes, truncation, sync, creation, rename and unlink of a file directly
/// in the directory, every `fsync` of the directory itself, and the `committed N` lines the process wrote to
/// its standard output (fd 1), which say which commits had returned at each point.
///
/// Files are followed by inode (a number given at creation), so a rename moves the contents with the name.
/// A write through a descriptor opened with `O_DSYNC` or `O_SYNC` is followed by a `.syncWrite` of itself: it
/// is durable when it returns, and a crash before that may have kept any part of it.
struct PowerLossTrace {
    enum Op {
        /// A new, empty file `name` (inode `file`).
        case create(name: String, file: Int)
        case write(file: Int, offset: Int, bytes: [UInt8])
        /// The size set (`ftruncate`, or `fallocate` growing the file).
        case truncate(file: Int, size: Int)
        /// `fsync` or `fdatasync` of the file: every earlier write and truncation of it is durable.
        case sync(file: Int)
        /// The return of an `O_DSYNC` write (the op at `op`): that write is durable, nothing else.
        case syncWrite(op: Int)
        case rename(from: String, to: String)
        case unlink(name: String)
        /// `fsync` of the directory: every earlier creation, rename and unlink in it is durable.
        case syncDirectory
        /// `committed N` written to standard output: commit N returned.
        case ack(Int)

        var isDirectoryOp: Bool {
            switch self {
            case .create, .rename, .unlink: true
            default: false
            }
        }

        var isDataOp: Bool {
            switch self {
            case .write, .truncate: true
            default: false
            }
        }

        var file: Int? {
            switch self {
            case .write(let f, _, _), .truncate(let f, _), .sync(let f), .create(_, let f): f
            default: nil
            }
        }
    }

    var ops: [Op] = []
    /// The first name of each inode, for descriptions.
    var names: [Int: String] = [:]
    /// What the trace held that this model does not follow (a `write` without an offset to a tracked file,
    /// a dump shorter than the call's result): each makes the states untrustworthy, so the test fails on it.
    var unsupported: [String] = []
    /// `failed N` lines: commits that threw (none in a run without faults).
    var failedCommits: [Int] = []

    /// The same operations without the syncs at `dropped` (renumbered): what an engine that left those syncs
    /// out would have done, for showing that the states then fail.
    func without(syncsAt dropped: Set<Int>) -> PowerLossTrace {
        var out = self
        out.ops = []
        var renumbered: [Int: Int] = [:]
        for (i, op) in ops.enumerated() {
            switch op {
            case .sync, .syncWrite, .syncDirectory: if dropped.contains(i) { continue }
            default: break
            }
            renumbered[i] = out.ops.count
            if case .syncWrite(let w) = op { out.ops.append(.syncWrite(op: renumbered[w]!)) } else { out.ops.append(op) }
        }
        return out
    }

    func describe(_ i: Int) -> String {
        guard i >= 0 && i < ops.count else { return "#\(i) (start)" }
        let name = { (f: Int) in names[f] ?? "inode \(f)" }
        switch ops[i] {
        case .create(let n, _): return "#\(i) create \(n)"
        case .write(let f, let off, let b): return "#\(i) write \(name(f)) \(b.count) bytes at \(off)"
        case .truncate(let f, let s): return "#\(i) truncate \(name(f)) to \(s)"
        case .sync(let f): return "#\(i) sync \(name(f))"
        case .syncWrite(let op): return "#\(i) O_DSYNC write #\(op) returned"
        case .rename(let a, let b): return "#\(i) rename \(a) to \(b)"
        case .unlink(let n): return "#\(i) unlink \(n)"
        case .syncDirectory: return "#\(i) fsync of the directory"
        case .ack(let n): return "#\(i) committed \(n)"
        }
    }

    /// Reads the `strace` log at `tracePath`, keeping the files directly in `directory` whose names do not end
    /// in `.lock` (the lock file holds no data: its contents are written through a memory map).
    static func parse(tracePath: String, directory: String) throws -> PowerLossTrace {
        let data = try Data(contentsOf: URL(fileURLWithPath: tracePath))
        var parser = Parser(directory: directory)
        data.withUnsafeBytes { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            var start = 0
            let n = bytes.count
            while start < n {
                var end = start
                while end < n && bytes[end] != 10 { end += 1 }
                parser.line(UnsafeBufferPointer(rebasing: bytes[start..<end]))
                start = end + 1
            }
        }
        parser.finishCall()
        return parser.trace
    }

    private struct Parser {
        let directory: String
        var trace = PowerLossTrace()
        /// Name in the directory -> inode, as the process sees it (every operation applied).
        var entries: [String: Int] = [:]
        var nextInode = 0
        /// Descriptors opened with O_DSYNC or O_SYNC.
        var syncFDs: Set<Int> = []
        /// The `<unfinished ...>` start of a call, by thread.
        var unfinished: [String: String] = [:]
        /// A write whose dump lines are being read.
        var call: (kind: Kind, expected: Int, description: String)?
        var dump: [UInt8] = []

        enum Kind {
            case file(inode: Int, offset: Int, dsync: Bool)
            case stdout
        }

        init(directory: String) { self.directory = directory }

        mutating func line(_ b: UnsafeBufferPointer<UInt8>) {
            if b.count > 3 && b[0] == 32 && b[1] == 124 && b[2] == 32 {  // " | ": a line of a dump
                if call != nil { appendDump(b) }
                return
            }
            if b.count > 3 && b[0] == 32 && b[1] == 42 && b[2] == 32 { return }  // " * N bytes in buffer K"
            finishCall()
            syscall(String(decoding: b, as: UTF8.self))
        }

        /// ` | 00010  02 00 ... 00  ........ |`: up to 16 bytes in a fixed layout after the offset.
        mutating func appendDump(_ b: UnsafeBufferPointer<UInt8>) {
            var i = 3
            while i < b.count && b[i] != 32 { i += 1 }
            i += 2
            for k in 0..<16 {
                let p = i + k * 3 + (k >= 8 ? 1 : 0)
                guard p + 1 < b.count, let hi = hexValue(b[p]), let lo = hexValue(b[p + 1]) else { break }
                dump.append(hi << 4 | lo)
            }
        }

        func hexValue(_ c: UInt8) -> UInt8? {
            switch c {
            case 48...57: c - 48
            case 97...102: c - 87
            default: nil
            }
        }

        mutating func finishCall() {
            guard let c = call else { return }
            call = nil
            defer { dump = [] }
            if dump.count != c.expected {
                trace.unsupported.append("\(c.description): the dump holds \(dump.count) bytes, the call wrote \(c.expected)")
                return
            }
            switch c.kind {
            case .stdout:
                for line in String(decoding: dump, as: UTF8.self).split(separator: "\n") {
                    let parts = line.split(separator: " ")
                    guard parts.count >= 2, let n = Int(parts[1].trimmingCharacters(in: CharacterSet(charactersIn: ":"))) else { continue }
                    if parts[0] == "committed" { trace.ops.append(.ack(n)) }
                    if parts[0] == "failed" { trace.failedCommits.append(n) }
                }
            case .file(let inode, let offset, let dsync):
                trace.ops.append(.write(file: inode, offset: offset, bytes: dump))
                if dsync { trace.ops.append(.syncWrite(op: trace.ops.count - 1)) }
            }
        }

        mutating func syscall(_ rawLine: String) {
            guard let space = rawLine.firstIndex(of: " ") else { return }
            let pid = String(rawLine[..<space])
            var text = String(rawLine[rawLine.index(after: space)...].drop { $0 == " " })  // the pid is padded to 5 places
            if text.hasSuffix("<unfinished ...>") {
                unfinished[pid] = String(text.dropLast("<unfinished ...>".count))
                return
            }
            if text.hasPrefix("<... "), let close = text.range(of: " resumed>") {
                text = (unfinished.removeValue(forKey: pid) ?? "") + text[close.upperBound...]
            }
            guard let paren = text.firstIndex(of: "("), let eq = text.range(of: " = ", options: .backwards) else { return }
            let name = String(text[..<paren])
            let result = String(text[eq.upperBound...])
            if result.hasPrefix("-1") || result.hasPrefix("?") { return }  // failed: changed nothing
            var args = String(text[text.index(after: paren)..<eq.lowerBound])
            if args.hasSuffix(")") { args.removeLast() }
            let resultValue = Int(result.prefix { $0.isNumber }) ?? 0
            switch name {
            case "openat", "open", "creat":
                guard let path = annotation(result) else { return }
                let fd = resultValue
                let flags = name == "creat" ? 0o1101 : flagsArgument(args)
                if flags & 0x1000 != 0 { syncFDs.insert(fd) } else { syncFDs.remove(fd) }  // O_DSYNC (O_SYNC includes it)
                guard let file = tracked(path) else { return }
                if entries[file] == nil {
                    guard flags & 0o100 != 0 else { return }  // O_CREAT
                    let inode = nextInode
                    nextInode += 1
                    entries[file] = inode
                    trace.names[inode] = file
                    trace.ops.append(.create(name: file, file: inode))
                } else if flags & 0o1000 != 0, let inode = entries[file] {  // O_TRUNC
                    trace.ops.append(.truncate(file: inode, size: 0))
                }
            case "close":
                if let fd = Int(args.prefix { $0.isNumber }) { syncFDs.remove(fd) }
            case "dup", "dup2", "dup3":
                if let fd = Int(args.prefix { $0.isNumber }), syncFDs.contains(fd) { syncFDs.insert(resultValue) }
            case "write", "pwrite64", "writev", "pwritev", "pwritev2":
                guard let fd = Int(args.prefix { $0.isNumber }) else { return }
                if fd == 1 {
                    call = (.stdout, resultValue, text)
                    return
                }
                guard let path = annotation(args), let file = tracked(path) else { return }
                guard let inode = entries[file] else {
                    trace.unsupported.append("\(text): a write to a file never opened")
                    return
                }
                guard name.hasPrefix("pwrite"), let offset = lastIntegerArgument(args) else {
                    trace.unsupported.append("\(text): a write at the file position (not followed)")
                    return
                }
                call = (.file(inode: inode, offset: offset, dsync: syncFDs.contains(fd)), resultValue, text)
            case "ftruncate":
                guard let path = annotation(args), let file = tracked(path), let inode = entries[file],
                      let size = lastIntegerArgument(args) else { return }
                trace.ops.append(.truncate(file: inode, size: size))
            case "fallocate":
                // fallocate(FD, MODE, OFFSET, LENGTH): grows the file unless FALLOC_FL_KEEP_SIZE (1).
                guard let path = annotation(args), let file = tracked(path), let inode = entries[file] else { return }
                let parts = args.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
                guard parts.count == 4, let mode = integer(parts[1]), let off = integer(parts[2]), let len = integer(parts[3]) else {
                    trace.unsupported.append("\(text): fallocate not understood")
                    return
                }
                if mode & 1 == 0 { trace.ops.append(.truncate(file: inode, size: -(off + len))) }  // negative: at least
            case "fsync", "fdatasync":
                guard let path = annotation(args) else { return }
                if path == directory {
                    trace.ops.append(.syncDirectory)
                } else if let file = tracked(path), let inode = entries[file] {
                    trace.ops.append(.sync(file: inode))
                }
            case "rename", "renameat", "renameat2":
                let paths = quotedPaths(args)
                guard paths.count == 2 else { return }
                let from = tracked(paths[0]), to = tracked(paths[1])
                if let from, let to, let inode = entries.removeValue(forKey: from) {
                    entries[to] = inode
                    trace.ops.append(.rename(from: from, to: to))
                } else if from != nil || to != nil {
                    trace.unsupported.append("\(text): a rename into or out of the directory")
                }
            case "unlink", "unlinkat":
                guard let path = quotedPaths(args).first, let file = tracked(path), entries[file] != nil else { return }
                entries[file] = nil
                trace.ops.append(.unlink(name: file))
            default:
                break
            }
        }

        /// The name of a file directly in the directory (not its lock file), nil for any other path.
        func tracked(_ path: String) -> String? {
            let prefix = directory + "/"
            guard path.hasPrefix(prefix) else { return nil }
            let name = String(path.dropFirst(prefix.count))
            if name.isEmpty || name.contains("/") || name.hasSuffix(".lock") { return nil }
            return name
        }

        /// The path in the first `<...>` annotation (`3</dir/file>`), without ` (deleted)`.
        func annotation(_ s: String) -> String? {
            guard let open = s.range(of: "</"), let close = s[open.upperBound...].firstIndex(of: ">") else { return nil }
            var p = "/" + s[open.upperBound..<close]
            if p.hasSuffix(" (deleted)") { p = String(p.dropLast(" (deleted)".count)) }
            return p
        }

        /// Every quoted argument, made absolute with the annotated directory descriptor before it.
        func quotedPaths(_ args: String) -> [String] {
            var out: [String] = []
            var lastDir: String?
            var rest = Substring(args)
            while let q = rest.firstIndex(where: { $0 == "\"" || $0 == "<" }) {
                if rest[q] == "<" {
                    guard let close = rest[q...].firstIndex(of: ">") else { break }
                    lastDir = String(rest[rest.index(after: q)..<close])
                    rest = rest[rest.index(after: close)...]
                    continue
                }
                guard let end = rest[rest.index(after: q)...].firstIndex(of: "\"") else { break }
                let p = String(rest[rest.index(after: q)..<end])
                out.append(p.hasPrefix("/") ? p : "\(lastDir ?? directory)/\(p)")
                rest = rest[rest.index(after: end)...]
            }
            return out
        }

        /// The open flags: the first `0x` number after the path argument.
        func flagsArgument(_ args: String) -> Int {
            guard let lastQuote = args.lastIndex(of: "\"") else { return 0 }
            let after = args[args.index(after: lastQuote)...].split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let f = after.first(where: { !$0.isEmpty }) else { return 0 }
            return f.hasPrefix("0x") ? Int(f.dropFirst(2), radix: 16) ?? 0 : Int(f) ?? 0
        }

        func lastIntegerArgument(_ args: String) -> Int? {
            guard let last = args.split(separator: ",").last else { return nil }
            return integer(last.trimmingCharacters(in: .whitespaces))
        }

        func integer(_ t: String) -> Int? { t.hasPrefix("0x") ? Int(t.dropFirst(2), radix: 16) : Int(t) }
    }
}
