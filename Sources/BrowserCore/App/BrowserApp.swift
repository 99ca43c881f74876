import Foundation
import RealmCoreFile
import RealmQuery
import RealmStorage
import RealmTools

/// The browser: reads events from a terminal, runs them through the reducer, draws the state, and polls
/// the database for commits made elsewhere.
public final class BrowserApp {
    public let terminal: Terminal
    /// Replaced when another file is opened (`:open`, or after `:demo`).
    public private(set) var data: BrowserData
    public internal(set) var state: AppState
    public let renderer: Renderer
    public let keyMap: KeyMap
    /// How often the database is checked for a newer version.
    public var pollMilliseconds = 250
    /// For an encrypted file: decrypted pages kept in memory before they are given back (at a poll, between
    /// two screens, and by the engine during a long scan such as a query over every object).
    /// `REALM_BROWSER_DECRYPTED_MB` sets it.
    public var decryptedBudgetBytes = (Int(ProcessInfo.processInfo.environment["REALM_BROWSER_DECRYPTED_MB"] ?? "") ?? 256) << 20 {
        didSet { data.database.decryptedPageBudget = decryptedBudgetBytes }
    }
    private var lastPoll = DispatchTime.now()
    /// The job running off the main loop (`QueryJob`), if any, and the reader shown when it started.
    var worker: QueryWorker?
    var workerReadFrom: AnyObject?
    /// A newer version another process committed, read by the running update job before it is shown.
    var updating: Update?
    /// How long a job just started is waited for before the screen shows it running: shorter work shows its
    /// result at once, longer work its progress in the status bar.
    public var quickJobMilliseconds = 100
    /// How often the screen is brought up to date while a job runs (its progress; keys come in at once).
    public var jobPollMilliseconds = 50
    /// Runs at every check a job's query makes, on the job's thread (tests hold a job at a known point).
    public var jobCheckpoint: (@Sendable (QueryProgress) -> Void)?

    public init(terminal: Terminal, data: BrowserData, theme: Theme = .dark, keyMap: KeyMap = .standard) {
        self.terminal = terminal
        self.data = data
        data.database.decryptedPageBudget = decryptedBudgetBytes
        self.keyMap = keyMap
        renderer = Renderer(theme: theme, keyMap: keyMap)
        state = AppState.initial(size: terminal.size, data: data, format: renderer.format)
        // `REALM_BROWSER_QUERY_CHECK_DELAY_MS`: a pause at every check of a background query (once per leaf of
        // objects), so that end-to-end tests see a query running on a small database.
        if let ms = Int(ProcessInfo.processInfo.environment["REALM_BROWSER_QUERY_CHECK_DELAY_MS"] ?? ""), ms > 0 {
            jobCheckpoint = { _ in usleep(UInt32(min(ms, 1000)) * 1000) }
        }
    }

    /// Runs until the user quits.
    public func run() {
        draw()
        while !state.shouldQuit && !terminal.isDisconnected {
            let event = terminal.nextEvent(timeoutMilliseconds: worker == nil ? pollMilliseconds : jobPollMilliseconds)
            var changed = false
            if let event {
                handle(event)
                changed = true
            }
            changed = pollJob() || changed
            let now = DispatchTime.now()
            if (event == nil && worker == nil) || now.uptimeNanoseconds - lastPoll.uptimeNanoseconds >= UInt64(pollMilliseconds) * 1_000_000 {
                lastPoll = now
                changed = checkForChanges() || changed
                // Not while a job reads: trimming needs the only snapshot open in the process.
                if worker == nil { trimDecryptedPagesIfOverBudget() }
                if state.pendingWrite != nil {
                    retryPendingWrite()
                    changed = true
                }
            }
            if changed && !state.shouldQuit { draw() }
        }
        stopWorker(wait: true)
        updating?.newer.close()
        updating = nil
    }

    /// Applies one event.
    public func handle(_ event: TerminalEvent) {
        switch event {
        case .key(let k): state.reduce(.key(k), data: data, keyMap: keyMap)
        case .resize(let s): state.reduce(.resize(s), data: data, keyMap: keyMap)
        case .mouse(let m): state.reduce(.mouse(m), data: data, keyMap: keyMap)
        }
        runPendingTask()
        // A job cancelled with Esc, or whose table was closed, stops now.
        if let w = worker, state.running?.id != w.jobID { stopWorker() }
        settleUpdate()
    }

    /// Runs a command by name, as the `:` palette does.
    public func perform(_ command: Command) {
        state.reduce(.command(command), data: data, keyMap: keyMap)
        runPendingTask()
    }

    /// Gives back decrypted pages past the budget: the snapshot is closed for it and taken again (the file
    /// is not re-read otherwise; the screen shows the same version). True when it trimmed.
    @discardableResult
    public func trimDecryptedPagesIfOverBudget() -> Bool {
        guard data.database.isEncrypted, !data.isInTransaction, data.database.decryptedBytes > decryptedBudgetBytes else { return false }
        var trimmed = false
        let before = data.version
        do {
            try data.withSnapshotClosed { trimmed = data.database.trimDecryptedPages() }
            if data.version != before { state.reduce(.databaseChanged, data: data, keyMap: keyMap) }
        } catch {
            state.message = StatusMessage("Reading the file again failed: \(error)", isError: true)
        }
        return trimmed
    }

    /// Tries again a write that waited for another process's write lock.
    public func retryPendingWrite() {
        state.retryPendingWrite(data: data)
    }

    // MARK: Tasks

    /// Does the work the reducer asked for (`AppState.task`), drawing progress meanwhile.
    public func runPendingTask() {
        while let task = state.task {
            state.task = nil
            if case .query(let job) = task {
                startJob(job)
                continue
            }
            // Everything else wants the file to itself, or replaces the database: a job stops first.
            if worker != nil {
                stopWorker(wait: true)
                state.running = nil
                state.jobProgress = nil
            }
            if let u = updating {
                updating = nil
                u.newer.close()
            }
            do {
                switch task {
                case .query: break
                case .compact:
                    state.message = StatusMessage("Compacting \(NSStringPath(path: data.path).lastComponent)…")
                    draw()
                    let (before, after) = try data.compact()
                    state.reduce(.databaseChanged, data: data, keyMap: keyMap)
                    state.message = StatusMessage("Compacted: \(ValueFormat.byteSize(before)) → \(ValueFormat.byteSize(after))")
                case .demo(let path, let objects):
                    try generateDemo(path: path, objects: objects)
                    state.confirmation = Confirmation("Demo database written to \(path) (\(ValueFormat.grouped(objects)) objects). Open it?",
                                                      task: .open(path: path))
                case .open(let path), .convert(let path):
                    if case .convert = task, let core = data.realmCore {
                        state.message = StatusMessage("Converting \(NSStringPath(path: core.path).lastComponent) to \(path)…")
                        draw()
                        try BrowserApp.convert(core, to: path)
                    }
                    // A converted copy opens writable: editing happens on it.
                    let readOnly = data.isReadOnly && data.realmCore == nil
                    let fresh: BrowserData
                    if RealmCoreFile.looksLikeRealmCoreFile(path: path) {
                        fresh = try BrowserData(realmCorePath: path, key: nil)
                    } else {
                        fresh = try BrowserData(database: try Database.open(path: path, options: DatabaseOptions(readOnly: readOnly)))
                    }
                    var next = AppState.initial(size: terminal.size, data: fresh, format: renderer.format)
                    next.queryHistory = state.queryHistory
                    next.commandHistory = state.commandHistory
                    if case .convert = task {
                        next.message = StatusMessage("Converted to \(path), verified; this copy is open to edit")
                    } else {
                        next.message = StatusMessage("Opened \(path)")
                    }
                    data = fresh
                    data.database.decryptedPageBudget = decryptedBudgetBytes
                    state = next
                }
            } catch {
                state.progress = nil
                state.message = StatusMessage("\(error)", isError: true)
            }
        }
    }

    /// Writes `core` converted to a new file at `path`, verified; on any failure the file is removed.
    static func convert(_ core: RealmCoreFile, to path: String) throws {
        do {
            let db = try Database.open(path: path)
            try CoreConversion(file: core).run(into: db)
            let report = try db.verify()
            guard report.isOK else { throw ConversionFailure(message: "the converted copy does not verify: \(report.problems.first ?? "")") }
        } catch {
            for suffix in ["", ".lock", ".log"] {
                try? FileManager.default.removeItem(atPath: path + suffix)  // (absent: nothing to remove)
            }
            throw error
        }
    }

    private func generateDemo(path: String, objects: Int) throws {
        let db = try Database.open(path: path)
        var lastDraw = DispatchTime.now()
        let demo = DemoDatabase(objects: objects) { [self] done, total in
            let now = DispatchTime.now()
            guard now.uptimeNanoseconds - lastDraw.uptimeNanoseconds > 50_000_000 || done == total else { return }
            lastDraw = now
            state.progress = TaskProgress(label: "demo", done: done, total: total)
            draw()
        }
        defer { state.progress = nil }
        try demo.generate(into: db)
    }

    /// Handles every queued event, then draws (tests type into a `VirtualTerminal` and call this).
    public func processPendingInput() {
        while !state.shouldQuit, let e = terminal.nextEvent(timeoutMilliseconds: 0) { handle(e) }
        if !state.shouldQuit { draw() }
    }

    /// Takes a newer version of the database if there is one; true when the state changed. When no table
    /// shown needs reading again (no query, sort or collection table), it is shown at once; otherwise a job
    /// reads those tables in it (`startUpdate`), and the screen shows the version it showed until they are in.
    /// A newer commit while that job runs starts it again on the newest version. A list being opened, or an
    /// export while tables need reading, ends first.
    @discardableResult
    public func checkForChanges() -> Bool {
        if let job = state.running {
            if job.purpose == .open { return false }
            if case .export = job.purpose, !state.updatePlan().isEmpty { return false }
        }
        do {
            guard let newer = try data.newerVersion(than: updating?.newer) else { return false }
            let absorbing = state.running?.queryJob
            if updating == nil, absorbing == nil, state.updatePlan().isEmpty {
                data.show(newer)
                state.reduce(.databaseChanged, data: data, keyMap: keyMap)
                return true
            }
            startUpdate(newer, absorbing: absorbing)
        } catch {
            state.message = StatusMessage("Reading the newest version failed: \(error)", isError: true)
        }
        return true
    }

    /// Draws the current state.
    public func draw() {
        if state.needsFullRedraw {
            terminal.invalidate()
            state.needsFullRedraw = false
        }
        if state.size != terminal.size { state.reduce(.resize(terminal.size), data: data, keyMap: keyMap); terminal.invalidate() }
        terminal.present(renderer.render(state, data: data))
    }
}

/// A conversion whose result did not verify.
struct ConversionFailure: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}
