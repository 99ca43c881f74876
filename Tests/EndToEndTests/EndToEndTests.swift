import Foundation
import Testing
import Glibc
import TestSupport

/// The real `realm-browser` binary in a real terminal: tmux runs it, `send-keys` types, `capture-pane` reads
/// the screen. Each wait polls the screen until it shows what is expected and has stopped changing.
@Suite(.serialized, .enabled(if: Tmux.isInstalled, "tmux is not installed (CI installs it): end-to-end tests skipped"))
struct EndToEndTests {
    @Test func browseFollowLinksListsBacklinksResizeAndQuit() throws {
        let dir = TempDir()
        let bin = try productExecutablePath("realm-browser", environmentVariable: "REALM_BROWSER")
        let demo = try runProcess(bin, ["demo", "d.realm", "--objects", "2000", "--seed", "1"], in: dir.path)
        try #require(demo.status == 0, "\(demo.stderr)")

        let t = try Tmux(command: "\(bin) d.realm", in: dir.path, width: 100, height: 30)
        defer { t.kill() }
        var screen = try t.waitFor { $0.contains("Classes") && $0.contains("Company") }
        #expect(screen.hasPrefix(" Company"))

        // Browse a class: to Person in the class list, back to the table.
        t.send("Tab", "j", "j", "j", "j", "Tab")
        screen = try t.waitFor { title($0) == "Person" && $0.contains("🔑id Int │ name String") }

        // Follow a link (Lars Dubois's company) and come back.
        t.send("j", "l", "l", "l", "l", "l", "l", "l")
        screen = try t.waitFor { $0.contains("row 2/600") && $0.contains("Stark Industr") }
        t.send("Enter")
        screen = try t.waitFor { $0.hasPrefix(" Person › Company #") }
        #expect(screen.contains("employees") && screen.contains("Stark Industries 2"))
        t.send("Escape")
        screen = try t.waitFor { title($0) == "Person" }
        #expect(screen.contains("row 2/600"))

        // A list, then the linking objects of one of its dogs.
        t.send("h", "Enter")
        screen = try t.waitFor { $0.hasPrefix(" Person › #1 Lars Dubois › dogs") }
        #expect(screen.contains("# │ name String"))
        t.send("$", "h", "Enter")
        screen = try t.waitFor { $0.contains("› owners") }
        #expect(screen.contains("Lars Dubois"))
        t.send("q", "q")
        screen = try t.waitFor { title($0) == "Person" }

        // An incoming link nobody declared: AllTypes.person, as the last column of Person.
        t.send("$")
        screen = try t.waitFor { $0.contains("← AllTypes.person") }
        t.send("0")
        screen = try t.waitFor { $0.contains("name String") }

        // Resize, including below the minimum, and back.
        t.resize(50, 12)
        screen = try t.waitFor { $0.split(separator: "\n").count == 12 && $0.contains("Classes") }
        t.resize(30, 6)
        screen = try t.waitFor { $0.contains("Terminal too small") }
        t.resize(100, 30)
        screen = try t.waitFor { $0.contains("Classes") && title($0) == "Person" }

        // Live updates: another process adds a person; the count changes within a second, the row stays.
        try #"{"Person": [{"id": 1000000, "name": "Live Update", "birthday": "2000-01-01T00:00:00Z"}]}"#
            .write(toFile: dir.file("add.json"), atomically: true, encoding: .utf8)
        let imported = try runProcess(bin, ["import", "d.realm", "add.json"], in: dir.path)
        #expect(imported.status == 0, "\(imported.stderr)")
        screen = try t.waitFor(timeout: 5) { $0.contains("Person   601") }
        #expect(screen.contains("row 2/601"))

        // Help, then quit: the terminal is given back.
        t.send("?")
        screen = try t.waitFor { $0.contains("incoming-links") }
        t.send("Escape", "Q")
        screen = try t.waitFor { $0.contains("EXITED:0") }
        #expect(try t.display("#{alternate_on}") == "0")
    }

    /// The browser in tmux on a new demo database (2,000 objects, seed 1), showing the Person table.
    func browsePeople(_ dir: TempDir, width: Int) throws -> (bin: String, tmux: Tmux) {
        let bin = try productExecutablePath("realm-browser", environmentVariable: "REALM_BROWSER")
        try #require(try runProcess(bin, ["demo", "d.realm", "--objects", "2000", "--seed", "1"], in: dir.path).status == 0)
        let t = try Tmux(command: "\(bin) d.realm", in: dir.path, width: width, height: 30)
        _ = try t.waitFor { $0.contains("Classes") && $0.contains("Company") }
        t.send("Tab", "j", "j", "j", "j", "Tab")
        _ = try t.waitFor { title($0) == "Person" }
        return (bin, t)
    }

    @Test func queryWithCJKSortAndExportInARealTerminal() throws {
        let dir = TempDir()
        let (_, t) = try browsePeople(dir, width: 100)
        defer { t.kill() }

        // A mistake, typed after CJK text: the caret sits under it, counted in cells.
        t.send("/", "name == '日本' AND agee > 3", "Enter")
        var screen = try t.waitFor { $0.contains("did you mean 'age'") }
        let lines = screen.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let caretLine = try #require(lines.first { $0.contains("^~~~") })
        // `/ ` then `name == '` (9) + 日本 (4) + `' AND ` (6): 21 cells before the caret.
        #expect(caretLine.prefix { $0 == " " }.count == 21, "\(caretLine)")

        // Fixed, it filters; the status bar says how many of how many.
        t.send("C-u", "age >= 80 AND name CONTAINS[c] 'a'", "Enter")
        screen = try t.waitFor { $0.contains(" of 600") && !$0.contains("Enter runs") }
        let match = try #require(screen.range(of: #"row 1/(\d+) of 600"#, options: .regularExpression))
        let count = Int(screen[match].split(separator: "/")[1].split(separator: " ")[0]) ?? -1
        #expect(count > 0 && count < 600)

        // Sort by age, descending, then export what is shown and read it back.
        t.send("l", "l", "]")
        screen = try t.waitFor { $0.contains("age Int? ▼") }
        t.send(":", "export out.csv", "Enter")
        screen = try t.waitFor { $0.contains("Exported \(count) objects") }
        let csv = try String(contentsOfFile: dir.file("out.csv"), encoding: .utf8)
        let rows = csv.split(whereSeparator: \.isNewline).dropFirst()
        let ages = rows.map { Int($0.split(separator: ",")[2]) ?? -1 }
        #expect(ages.count == count)
        #expect(ages == ages.sorted(by: >) && ages.allSatisfy { $0 >= 80 })
        t.send("Q")
        _ = try t.waitFor { $0.contains("EXITED:0") }
    }

    /// A query that takes seconds (each check of the query pauses, `REALM_BROWSER_QUERY_CHECK_DELAY_MS`): the
    /// status bar shows it running, keys and resizing work meanwhile, Esc stops it, and run again it ends.
    @Test func aLongQueryShowsProgressKeysWorkAndEscStopsIt() throws {
        let dir = TempDir()
        let bin = try productExecutablePath("realm-browser", environmentVariable: "REALM_BROWSER")
        try #require(try runProcess(bin, ["demo", "d.realm", "--objects", "5000", "--seed", "1"], in: dir.path).status == 0)
        let t = try Tmux(command: "env REALM_BROWSER_QUERY_CHECK_DELAY_MS=250 \(bin) d.realm", in: dir.path, width: 100, height: 30)
        defer { t.kill() }
        _ = try t.waitFor { $0.contains("Classes") && $0.contains("Company") }
        t.send("Tab", "j", "j", "j", "j", "j", "Tab")
        _ = try t.waitFor { title($0) == "Dog" }
        t.send("/", "name CONTAINS[c] 'a' OR breed ENDSWITH[c] 'er' SORT(name ASC)", "Enter")
        var screen = try t.waitFor { $0.contains("querying… ") && $0.contains("% · Esc cancels") }
        #expect(!screen.contains("Enter runs"))
        // Keys and resizing while it runs.
        t.send("j")
        screen = try t.waitFor { $0.contains("row 2/") && $0.contains("Esc cancels") }
        t.resize(80, 24)
        screen = try t.waitFor { $0.split(separator: "\n").count == 24 && $0.contains("Esc cancels") }
        t.send("Escape")
        screen = try t.waitFor { $0.contains("Query cancelled") }
        #expect(screen.contains("row 2/") && title(screen) == "Dog")
        // Again, from the history, to its end.
        t.send("/", "Up", "Enter")
        screen = try t.waitFor(timeout: 60) { $0.contains(" match") && !$0.contains("Esc cancels") }
        #expect(title(screen).hasPrefix("Dog (name CONTAINS[c] 'a'"), "\(screen)")
        t.send("Q")
        _ = try t.waitFor { $0.contains("EXITED:0") }
    }

    /// After another process commits, a table with a query is read again off the main loop (each check of the
    /// work pauses, `REALM_BROWSER_QUERY_CHECK_DELAY_MS`): the screen keeps the version it showed with
    /// `updating…` in the status bar, keys work, then the new result shows. A list opens the same way, and
    /// Esc leaves the table it was asked from.
    @Test func aCommitElsewhereAndAListOpenedAreReadWhileKeysWork() throws {
        let dir = TempDir()
        let bin = try productExecutablePath("realm-browser", environmentVariable: "REALM_BROWSER")
        try #require(try runProcess(bin, ["demo", "d.realm", "--objects", "5000", "--seed", "1"], in: dir.path).status == 0)
        let t = try Tmux(command: "env REALM_BROWSER_QUERY_CHECK_DELAY_MS=400 \(bin) d.realm", in: dir.path, width: 100, height: 30)
        defer { t.kill() }
        _ = try t.waitFor { $0.contains("Classes") && $0.contains("Company") }
        t.send("Tab", "j", "j", "j", "j", "j", "Tab")
        _ = try t.waitFor { title($0) == "Dog" }
        t.send("/", "age >= 0", "Enter")
        var screen = try t.waitFor(timeout: 60) { $0.contains(" match") && !$0.contains("Esc cancels") }
        let total = try #require(screen.range(of: #"row 1/[0-9,]+ of [0-9,]+"#, options: .regularExpression).map { String(screen[$0]) })
        let before = Int(total.split(separator: " ").last!.replacingOccurrences(of: ",", with: "")) ?? -1
        #expect(total.hasPrefix("row 1/\(grouped(before)) of "), "\(total)")

        // Another process adds a dog: the query runs again in the new version while the screen shows the old.
        try #"{"Dog": [{"name": "Live Dog", "age": 3, "weight": 1.5, "vaccinated": true}]}"#
            .write(toFile: dir.file("add.json"), atomically: true, encoding: .utf8)
        let imported = try runProcess(bin, ["import", "d.realm", "add.json"], in: dir.path)
        #expect(imported.status == 0, "\(imported.stderr)")
        screen = try t.waitFor(timeout: 10) { $0.contains("updating… ") && $0.contains("% · Esc cancels") }
        #expect(screen.contains("row 1/\(grouped(before)) of \(grouped(before))"), "\(screen)")
        t.send("j")
        screen = try t.waitFor { $0.contains("row 2/\(grouped(before))") && $0.contains("Esc cancels") }
        screen = try t.waitFor(timeout: 60) { !$0.contains("Esc cancels") && $0.contains("of \(grouped(before + 1))") }
        #expect(screen.contains("row 2/\(grouped(before + 1))"), "\(screen)")

        // A list: read before it opens; Esc leaves the people shown, Enter again opens it.
        t.send("Tab", "k", "Tab")
        _ = try t.waitFor { title($0) == "Person" }
        t.send("j", "l", "l", "l", "l", "l", "l", "Enter")
        screen = try t.waitFor { $0.contains("opening dogs… · Esc cancels") }
        #expect(title(screen) == "Person")
        t.send("Escape")
        screen = try t.waitFor { $0.contains("Opening dogs cancelled") }
        #expect(title(screen) == "Person" && screen.contains("row 2/"))
        t.send("Enter")
        screen = try t.waitFor { title($0).hasPrefix("Person › #") && title($0).hasSuffix(" › dogs") && !$0.contains("Esc cancels") }
        t.send("Q")
        _ = try t.waitFor { $0.contains("EXITED:0") }
    }

    @Test func editInATransactionAndReadItBackFromTheCommandLine() throws {
        let dir = TempDir()
        let (bin, t) = try browsePeople(dir, width: 110)
        defer { t.kill() }
        // A wrong value first: nothing is written, the editor says why.
        t.send("t", "l", "e", "C-u", "名前 ✏️", "Enter", "l", "e", "C-u", "old", "Enter")
        var screen = try t.waitFor { $0.contains("'old' is not an integer") }
        t.send("C-u", "77", "Enter")
        screen = try t.waitFor { $0.contains("TX 2 edits") }
        // Uncommitted: another process does not see it.
        var q = try runProcess(bin, ["query", "d.realm", "Person", "id == 0", "--format", "json"], in: dir.path)
        #expect(!q.stdout.contains("名前 ✏️"))
        t.send("C-s")
        screen = try t.waitFor { $0.contains("Committed 2 edits") }
        q = try runProcess(bin, ["query", "d.realm", "Person", "id == 0", "--format", "json"], in: dir.path)
        #expect(q.stdout.contains("\"name\": \"名前 ✏️\""), "\(q.stdout)")
        #expect(q.stdout.contains("\"age\": 77"), "\(q.stdout)")
        t.send("Q")
        _ = try t.waitFor { $0.contains("EXITED:0") }
        _ = screen
    }

    @Test func setsAndDictionariesEditedInARealTerminalAndReadBackFromTheCommandLine() throws {
        let dir = TempDir()
        let (bin, t) = try browsePeople(dir, width: 120)
        defer { t.kill() }
        t.send("Tab", "j", "j", "Tab")   // AllTypes, after Person
        _ = try t.waitFor { title($0) == "AllTypes" }
        // The last columns: …, intSet, stringSet, dogSet, scores, anyMap, address.
        t.send("$", "h", "h", "h", "h", "h", "Enter")
        _ = try t.waitFor { title($0) == "AllTypes › #0 › intSet" }
        t.send("a", "4242", "Enter")
        _ = try t.waitFor { $0.contains("Added 4242 to intSet") }
        t.send("a", "4242", "Enter")
        _ = try t.waitFor { $0.contains("4242 is already in intSet: nothing was written") }
        t.send("Escape", "l", "l", "l", "Enter")
        _ = try t.waitFor { title($0) == "AllTypes › #0 › scores" }
        t.send("a", "a.b", "Enter")
        _ = try t.waitFor { $0.contains("may not contain '.'") }
        t.send("C-u", "zz", "Enter", "7", "Enter")
        _ = try t.waitFor { $0.contains("scores[\"zz\"] set") }
        let q = try runProcess(bin, ["query", "d.realm", "AllTypes", "id == 0", "--format", "json"], in: dir.path)
        #expect(q.stdout.contains("4242"), "\(q.stdout)")
        #expect(q.stdout.contains("\"zz\": 7"), "\(q.stdout)")
        t.send("Q")
        _ = try t.waitFor { $0.contains("EXITED:0") }
    }

    @Test func rollbackDeleteWithBacklinksAndTheMouse() throws {
        let dir = TempDir()
        let bin = try productExecutablePath("realm-browser", environmentVariable: "REALM_BROWSER")
        try #require(try runProcess(bin, ["demo", "d.realm", "--objects", "2000", "--seed", "1"], in: dir.path).status == 0)
        func count(_ cls: String, _ q: String) throws -> Int {
            let r = try runProcess(bin, ["query", "d.realm", cls, q, "--format", "count"], in: dir.path)
            return Int(r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
        }
        let ownerless = try count("Dog", "owner == nil")
        let ownedByFirst = try count("Dog", "owner.id == 0")
        try #require(ownedByFirst > 0)
        let t = try Tmux(command: "\(bin) d.realm", in: dir.path, width: 110, height: 30)
        defer { t.kill() }
        _ = try t.waitFor { $0.contains("Classes") && $0.contains("Company") }
        // The mouse: a click on Person in the class list (the fifth class, line 6).
        t.send("-l", "\u{1B}[<0;3;7M")
        var screen = try t.waitFor { title($0) == "Person" }
        // A transaction rolled back changes nothing in the file.
        t.send("Tab", "t", "l", "e", "C-u", "Rolled Back", "Enter")
        screen = try t.waitFor { $0.contains("TX 1 edit") }
        t.send("C-z")
        screen = try t.waitFor { $0.contains("Rolled back 1 edit") }
        #expect(try count("Person", "name == 'Rolled Back'") == 0)
        // Deleting person 0 (first row): its dogs lose their owner.
        t.send("g", "g", "d")
        screen = try t.waitFor { $0.contains("Delete Person #0") }
        t.send("y")
        screen = try t.waitFor { $0.contains("Deleted 1 Person object") }
        #expect(try count("Person", "id == 0") == 0)
        #expect(try count("Dog", "owner == nil") == ownerless + ownedByFirst)
        t.send("Q")
        _ = try t.waitFor { $0.contains("EXITED:0") }
        _ = screen
    }

    @Test func anEncryptedFileAsksForItsKeyWithoutShowingIt() throws {
        let dir = TempDir()
        let bin = try productExecutablePath("realm-browser", environmentVariable: "REALM_BROWSER")
        let hex = (0..<64).map { String(format: "%02x", ($0 * 13 + 7) & 0xFF) }.joined()
        try #require(try runProcess(bin, ["demo", "k.realm", "--objects", "300", "--key", hex], in: dir.path).status == 0)
        // A wrong key first: a clear error, the terminal given back.
        let bad = try Tmux(command: "\(bin) k.realm", in: dir.path, width: 100, height: 20)
        _ = try bad.waitFor { $0.contains("is encrypted. Key") }
        bad.send(String(hex.reversed()), "Enter")
        var screen = try bad.waitFor { $0.contains("EXITED:1") }
        #expect(screen.contains("invalid key") && !screen.contains(String(hex.reversed())), "\(screen)")
        bad.kill()
        let t = try Tmux(command: "\(bin) k.realm", in: dir.path, width: 100, height: 20)
        defer { t.kill() }
        _ = try t.waitFor { $0.contains("is encrypted. Key") }
        t.send(hex, "Enter")
        screen = try t.waitFor { $0.contains("Classes") && $0.contains("Company") }
        #expect(!screen.contains(hex.prefix(16)))
        t.send("Q")
        _ = try t.waitFor { $0.contains("EXITED:0") }
        t.kill()
        // Given with --key, the key does not stay in the process list.
        let k = try Tmux(command: "\(bin) k.realm --key \(hex)", in: dir.path, width: 100, height: 20)
        defer { k.kill() }
        _ = try k.waitFor { $0.contains("Classes") }
        let pid = try #require(k.browserPid())
        let cmdline = try String(decoding: Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/cmdline")), as: UTF8.self)
        #expect(cmdline.contains("--key") && !cmdline.contains(hex.prefix(8)), "\(cmdline)")
        k.send("Q")
    }

    @Test(arguments: ["SIGTERM", "SIGSEGV", "Ctrl-C", "SIGHUP"])
    func theTerminalIsRestoredOnEveryWayOut(way: String) throws {
        let dir = TempDir()
        let bin = try productExecutablePath("realm-browser", environmentVariable: "REALM_BROWSER")
        try #require(try runProcess(bin, ["demo", "d.realm", "--objects", "100"], in: dir.path).status == 0)
        let t = try Tmux(command: "\(bin) d.realm", in: dir.path, width: 80, height: 20)
        defer { t.kill() }
        _ = try t.waitFor { $0.contains("Classes") }
        #expect(try t.display("#{alternate_on}") == "1")
        let browser = try #require(t.browserPid())
        switch way {
        case "Ctrl-C": t.send("C-c")
        case "SIGSEGV": #expect(Glibc.kill(browser, SIGSEGV) == 0)    // as a crash would
        case "SIGHUP": #expect(Glibc.kill(browser, SIGHUP) == 0)
        default: #expect(Glibc.kill(browser, SIGTERM) == 0)
        }
        let screen = try t.waitFor(timeout: 30) { $0.contains("EXITED:") }
        #expect(try t.display("#{alternate_on}") == "0")
        if way == "Ctrl-C" { #expect(screen.contains("EXITED:0")) }
        if way == "SIGSEGV" { #expect(!screen.contains("EXITED:0")) }
    }

    @Test func aVanishedTerminalEndsTheBrowser() throws {
        let dir = TempDir()
        let bin = try productExecutablePath("realm-browser", environmentVariable: "REALM_BROWSER")
        try #require(try runProcess(bin, ["demo", "d.realm", "--objects", "100"], in: dir.path).status == 0)
        // The tmux server killed: no hangup reaches the browser, its reads fail at once.
        let t = try Tmux(command: "\(bin) d.realm", in: dir.path, width: 80, height: 20)
        defer { t.kill() }
        _ = try t.waitFor { $0.contains("Classes") }
        let browser = try #require(t.browserPid())
        t.kill()
        let deadline = Date().addingTimeInterval(10)
        while Glibc.kill(browser, 0) == 0 && Date() < deadline { usleep(50_000) }
        #expect(Glibc.kill(browser, 0) != 0, "the browser kept running without its terminal")
        if Glibc.kill(browser, 0) == 0 { Glibc.kill(browser, SIGKILL) }
    }

    @Test func noColorKeepsAttributesOnly() throws {
        let dir = TempDir()
        let bin = try productExecutablePath("realm-browser", environmentVariable: "REALM_BROWSER")
        try #require(try runProcess(bin, ["demo", "d.realm", "--objects", "100"], in: dir.path).status == 0)
        let t = try Tmux(command: "env NO_COLOR=1 \(bin) d.realm", in: dir.path, width: 80, height: 20)
        defer { t.kill() }
        _ = try t.waitFor { $0.contains("Classes") }
        let styled = try t.tmux(["capture-pane", "-p", "-e", "-t", "t"])
        #expect(!styled.contains("[38;5;") && !styled.contains("[48;5;"))
        #expect(styled.contains("[7m") || styled.contains(";7m"))          // reverse video for the cursor
        t.send("Q")
        _ = try t.waitFor { $0.contains("EXITED:0") }
    }
}

/// The breadcrumbs: the first line of a screen, trimmed.
/// `12,345`, as the browser writes counts.
func grouped(_ n: Int) -> String {
    let digits = String(n.magnitude)
    var out = ""
    for (i, c) in digits.enumerated() {
        if i > 0 && (digits.count - i) % 3 == 0 { out.append(",") }
        out.append(c)
    }
    return (n < 0 ? "-" : "") + out
}

func title(_ screen: String) -> String {
    String(screen.prefix { $0 != "\n" }).trimmingCharacters(in: .whitespaces)
}

/// A tmux server of its own (its own socket), with one session running a command.
final class Tmux {
    static var isInstalled: Bool { FileManager.default.isExecutableFile(atPath: path) }
    static let path = ["/usr/bin/tmux", "/usr/local/bin/tmux", "/bin/tmux"].first { FileManager.default.isExecutableFile(atPath: $0) } ?? "/usr/bin/tmux"

    let socket = "rbe2e-\(UUID().uuidString.prefix(8))"
    let dir: String

    init(command: String, in dir: String, width: Int, height: Int) throws {
        self.dir = dir
        let shell = "cd '\(dir)' && env TERM=xterm-256color LANG=C.UTF-8 LC_ALL=C.UTF-8 SWIFT_BACKTRACE=interactive=no \(command); echo EXITED:$?; sleep 60"
        try tmux(["new-session", "-d", "-s", "t", "-x", "\(width)", "-y", "\(height)", shell])
    }

    @discardableResult
    func tmux(_ args: [String]) throws -> String {
        let r = try spawn(Tmux.path, ["-L", socket, "-f", "/dev/null"] + args, in: dir)
        guard r.status == 0 else { throw TmuxError(message: "tmux \(args.joined(separator: " ")): \(r.stdout)") }
        return r.stdout
    }

    func send(_ keys: String...) {
        do { try tmux(["send-keys", "-t", "t"] + keys) } catch { Issue.record(error) }
    }

    func resize(_ w: Int, _ h: Int) { _ = try? tmux(["resize-window", "-t", "t", "-x", "\(w)", "-y", "\(h)"]) }

    func capture() throws -> String { try tmux(["capture-pane", "-p", "-t", "t"]) }

    func display(_ format: String) throws -> String {
        try tmux(["display-message", "-p", "-t", "t", format]).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Polls the screen until `ready` holds on two captures in a row that are equal (the screen settled).
    func waitFor(timeout: Double = 20, _ ready: (String) -> Bool) throws -> String {
        let deadline = Date().addingTimeInterval(timeout)
        var last = ""
        while Date() < deadline {
            let s = try capture()
            if ready(s) && s == last { return s }
            last = s
            usleep(40_000)
        }
        throw TmuxError(message: "the screen never showed what was expected; last screen:\n\(last)")
    }

    func kill() { _ = try? tmux(["kill-server"]) }

    /// The browser's process: the child of the pane's shell.
    func browserPid() -> Int32? {
        guard let shell = try? display("#{pane_pid}"),
              let children = try? String(contentsOfFile: "/proc/\(shell)/task/\(shell)/children", encoding: .utf8) else { return nil }
        return children.split(separator: " ").first.flatMap { Int32($0) }
    }
}

/// Runs a program to its end with posix_spawn and waitpid, its output (stdout and stderr together) through
/// a file. (Foundation's `Process` sometimes never noticed tmux's client exit here, after it forked its server.)
func spawn(_ path: String, _ args: [String], in dir: String) throws -> (status: Int32, stdout: String) {
    let out = "\(dir)/.spawn-\(UUID().uuidString)"
    defer { unlink(out) }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, out, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    posix_spawn_file_actions_adddup2(&actions, 1, 2)
    let argv: [UnsafeMutablePointer<CChar>?] = ([path] + args).map { strdup($0) } + [nil]
    defer { argv.forEach { free($0) } }
    // The test runner's threads may block signals, and a child inherits the mask: start from a clean one.
    var attr = posix_spawnattr_t()
    posix_spawnattr_init(&attr)
    defer { posix_spawnattr_destroy(&attr) }
    var none = sigset_t(), all = sigset_t()
    sigemptyset(&none)
    sigfillset(&all)
    posix_spawnattr_setsigmask(&attr, &none)
    posix_spawnattr_setsigdefault(&attr, &all)
    posix_spawnattr_setflags(&attr, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
    var pid: pid_t = 0
    let rc = posix_spawn(&pid, path, &actions, &attr, argv, environ)
    guard rc == 0 else { throw TmuxError(message: "cannot run \(path): error \(rc)") }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
    let text = (try? String(contentsOfFile: out, encoding: .utf8)) ?? ""
    let exited = (status & 0x7F) == 0
    return (exited ? (status >> 8) & 0xFF : 128 + (status & 0x7F), text)
}

struct TmuxError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}

/// The command line around the browser: no terminal, bad themes.
@Suite struct BrowseCommandTests {
    @Test func withoutATerminalTheBrowserSaysSo() throws {
        let dir = TempDir()
        let bin = try productExecutablePath("realm-browser", environmentVariable: "REALM_BROWSER")
        try #require(try runProcess(bin, ["demo", "d.realm", "--objects", "50"], in: dir.path).status == 0)
        let r = try runProcess(bin, ["d.realm"], in: dir.path)
        #expect(r.status == 1)
        #expect(r.stderr.contains("needs a terminal"))
    }

    @Test func aBadThemeNamesFileLineAndKey() throws {
        let dir = TempDir()
        let bin = try productExecutablePath("realm-browser", environmentVariable: "REALM_BROWSER")
        try #require(try runProcess(bin, ["demo", "d.realm", "--objects", "50"], in: dir.path).status == 0)
        try "name = \"mine\"\n[styles]\nnormal = {}\nheader = { fg = \"#12345\" }\n"
            .write(toFile: dir.file("mine.toml"), atomically: true, encoding: .utf8)
        let r = try runProcess(bin, ["d.realm", "--theme", "mine.toml"], in: dir.path)
        #expect(r.status == 1)
        #expect(r.stderr.contains("mine.toml:4: styles.header.fg: not a colour"), "\(r.stderr)")
        let unknown = try runProcess(bin, ["d.realm", "--theme", "nope"], in: dir.path)
        #expect(unknown.stderr.contains("no theme named 'nope'") && unknown.stderr.contains("high-contrast"))
    }
}
