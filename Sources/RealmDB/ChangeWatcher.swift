import Foundation
import RealmStorage

/// Watches databases for newer committed versions and schedules `refresh()` of the Realms that want automatic
/// delivery: Realms bound to a dispatch queue (`Realm(configuration:queue:)`), Realms isolated to an actor
/// (run on the actor) and Realms of the main thread (delivered with `DispatchQueue.main.async`), once they have
/// an observer.
///
/// One timer for the process polls `Database.latestVersion()` of every watched database (two meta slots,
/// microseconds) every `interval`, which is how commits of other processes are seen; a commit through a
/// Realm of this process pokes the watcher so other threads hear of it at once. Realms of plain threads have no
/// queue to run a refresh on and still advance only at `refresh()`, `beginWrite()` and commits.
final class ChangeWatcher: @unchecked Sendable {
    // Safe: `entries` and `timer` are only touched under `lock`; each entry's `core` is only dereferenced on
    // the entry's own queue or actor (the one its Realm is confined to).
    static let shared = ChangeWatcher()
    static let interval: DispatchTimeInterval = .milliseconds(10)

    final class Entry: @unchecked Sendable {
        // Safe: `core` is used through `scheduler` only (elsewhere it is only loaded to see whether it is gone,
        // which weak references allow from any thread); `seenVersion` and `pending` are only touched under the
        // watcher's lock.
        weak var core: RealmCore?
        weak var database: Database?
        let scheduler: RealmScheduler
        var seenVersion: UInt64
        var pending = false

        init(core: RealmCore, scheduler: RealmScheduler, version: UInt64) {
            self.core = core
            database = core.database
            self.scheduler = scheduler
            seenVersion = version
        }
    }

    private let lock = NSLock()
    private var entries: [Entry] = []
    private var timer: DispatchSourceTimer?
    private let timerQueue = DispatchQueue(label: "io.realm-browser.change-watcher")

    /// Watches `core` (called on its queue or actor when it gains its first observer).
    func watch(_ core: RealmCore, scheduler: RealmScheduler) {
        let entry = Entry(core: core, scheduler: scheduler, version: core.snapshot?.version ?? 0)
        lock.withLock {
            entries.append(entry)
            if timer == nil {
                let t = DispatchSource.makeTimerSource(queue: timerQueue)
                t.schedule(deadline: .now() + ChangeWatcher.interval, repeating: ChangeWatcher.interval, leeway: .milliseconds(2))
                t.setEventHandler { [weak self] in self?.poll() }
                t.resume()
                timer = t
            }
        }
    }

    /// Checks at once (after a commit in this process).
    func poke() {
        let watching = lock.withLock { !entries.isEmpty }
        if watching { timerQueue.async { [weak self] in self?.poll() } }
    }

    /// Schedules a refresh on the queue of every watched Realm whose database has a version it has not seen.
    private func poll() {
        lock.withLock {
            entries.removeAll { $0.core == nil || $0.database == nil }
            if entries.isEmpty {
                timer?.cancel()
                timer = nil
                return
            }
            var latest: [ObjectIdentifier: Result<UInt64, Error>] = [:]
            for e in entries where !e.pending {
                guard let db = e.database else { continue }
                let id = ObjectIdentifier(db)
                let read = latest[id] ?? Result { try db.latestVersion() }
                latest[id] = read
                // A version that cannot be read is not passed over: the Realm's refresh, on its own queue, reads
                // it again and reports the error there (this timer has no one to tell).
                if case .success(let v) = read {
                    guard v != e.seenVersion else { continue }
                    e.seenVersion = v
                }
                e.pending = true
                e.scheduler.run { [weak self] in
                    self?.lock.withLock { e.pending = false }
                    e.core?.refreshFromWatcher()
                }
            }
        }
    }
}

extension RealmCore {
    /// The queue on which the watcher runs this Realm's refreshes: its own queue, or the main queue for a Realm
    /// of the main thread; nil for Realms of other threads (they refresh explicitly).
    var deliveryQueue: DispatchQueue? {
        if let queue { return queue }
        return isMainThreadRealm ? DispatchQueue.main : nil
    }

    /// Where the watcher runs this Realm's refreshes: its actor, its queue, or the main queue; nil for Realms of
    /// other threads.
    var deliveryScheduler: RealmScheduler? {
        if let isolation { return .actor(isolation) }
        return deliveryQueue.map { .queue($0) }
    }

    /// Starts automatic delivery when this Realm can have it (called when an observer is added).
    func watchIfNeeded() {
        guard !isWatched, let s = deliveryScheduler else { return }
        isWatched = true
        ChangeWatcher.shared.watch(self, scheduler: s)
    }

    /// Run on this Realm's queue when a newer version exists: with autorefresh, advances and delivers; without,
    /// tells Realm observers `.refreshRequired`. Inside a write transaction nothing happens (its commit delivers).
    func refreshFromWatcher() {
        guard !isClosed, transaction == nil, !notifiers.isEmpty else { return }
        if autorefresh {
            _ = refresh()
        } else if let s = snapshot {
            let latest: UInt64
            do {
                latest = try database.latestVersion()
            } catch {
                readFailed(error, "read the newest version")
            }
            if latest != s.version { notifiers.notifyRefreshRequired(realm: Realm(core: self)) }
        }
    }
}
