import Foundation
import RealmStorage

/// A weak reference to the actor a Realm is isolated to: the Realm does not keep its actor alive (an actor
/// usually keeps its Realm in a property), and a Realm whose actor is gone can no longer be used.
final class WeakActor: Sendable {
    weak let actor: (any Actor)?
    init(_ actor: any Actor) { self.actor = actor }
}

/// Where work for a Realm runs: on the serial queue it is confined to, or isolated to its actor.
enum RealmScheduler: Sendable {
    case queue(DispatchQueue)
    case actor(WeakActor)

    /// Runs `work` later on the queue, or on the actor (nothing when the actor is gone: nothing can use its
    /// Realm any more).
    func run(_ work: @escaping @Sendable () -> Void) {
        switch self {
        case .queue(let q):
            q.async(execute: work)
        case .actor(let weak):
            guard let actor = weak.actor else { return }
            Task { await actor.realmRun { _ in work() } }
        }
    }
}

extension Actor {
    /// Runs `body` isolated to this actor.
    func realmRun<T: Sendable>(_ body: @Sendable (isolated Self) throws -> T) rethrows -> T {
        try body(self)
    }
}

/// The actor-isolated Realms of this process, by actor and configuration: `Realm(configuration:actor:)` on the
/// same actor and configuration gives the same Realm while it is in use, as a thread's `Realm(configuration:)`
/// does.
final class ActorRealms: @unchecked Sendable {
    // Safe: `cores` is only read and written under `lock`; a core found here is handed only to code that names
    // its actor, and each use of it checks that the caller is isolated to that actor (`verifyThread`).
    static let shared = ActorRealms()
    private let lock = NSLock()
    private var cores: [String: WeakRealmCore] = [:]

    private static func key(_ actor: any Actor, _ configuration: Realm.Configuration) -> String {
        "\(UInt(bitPattern: ObjectIdentifier(actor).hashValue))\u{0}\(configuration.cacheKey)"
    }

    /// The open Realm of `configuration` isolated to `actor`, if any. The actor is compared too: an identifier
    /// of an actor that is gone may be reused by another.
    func core(for actor: any Actor, _ configuration: Realm.Configuration) -> RealmCore? {
        lock.withLock {
            guard let core = cores[ActorRealms.key(actor, configuration)]?.core, !core.isClosed,
                  core.isolation?.actor === actor else { return nil }
            return core
        }
    }

    func remember(_ core: RealmCore, for actor: any Actor) {
        lock.withLock {
            cores = cores.filter { $0.value.core != nil }
            cores[ActorRealms.key(actor, core.configuration)] = WeakRealmCore(core)
        }
    }
}

extension Realm {
    // MARK: Actor-isolated Realms

    /// Opens the Realm of `configuration` isolated to `actor`: instead of one thread, it belongs to the actor,
    /// and is used by code isolated to it, on whatever thread the actor runs, across suspension points. Such a
    /// Realm has `asyncWrite` and `asyncRefresh`, and delivers its notifications on the actor without
    /// `refresh()`. Set-up work (creating, migrating or compacting the file) runs on a background thread the
    /// first time, without blocking the caller's executor. The caller need not be isolated to `actor`, but only
    /// code isolated to it can use the Realm. On the same actor and configuration it gives the same Realm while
    /// that is in use.
    public init<A: Actor>(configuration: Realm.Configuration = .defaultConfiguration, actor: A,
                          _isolation: isolated (any Actor)? = #isolation) async throws {
        if let core = ActorRealms.shared.core(for: actor, configuration) {
            self.init(core: core)
            return
        }
        try await Realm.prepareInBackground(configuration)
        try Task.checkCancellation()
        self.init(core: try Realm.actorCore(configuration, actor))
    }

    /// When a Realm is opened: realm-swift downloads a synchronized Realm's data first with `.always` or `.once`.
    /// A Realm here has no server, so every case opens the local file as `.never` does.
    public enum OpenBehavior: Sendable {
        case never
        case always
        case once
    }

    /// `try await Realm()` on the main actor, as realm-swift has it: the Realm of `configuration` isolated to the
    /// main actor (`Realm(configuration:actor: MainActor.shared)`). As with realm-swift, in async code this
    /// overload is the one `Realm(...)` names, so such code writes `try await Realm()`.
    @MainActor
    public init(configuration: Realm.Configuration = .defaultConfiguration,
                downloadBeforeOpen: OpenBehavior = .never) async throws {
        self = try await Realm(configuration: configuration, actor: MainActor.shared)
    }

    /// Opens the Realm of `configuration` isolated to the calling actor (`Realm(configuration:actor:)` with that
    /// actor); on the main actor, a Realm of the main actor.
    public static func open(configuration: Realm.Configuration = .defaultConfiguration,
                            _isolation actor: isolated any Actor = #isolation) async throws -> Realm {
        try await Realm(configuration: configuration, actor: actor)
    }

    /// Opens (and releases) the Realm of `configuration` on a background thread, so that its migration,
    /// compaction and schema set-up happen there; the open that follows finds the file ready.
    private static func prepareInBackground(_ configuration: Realm.Configuration) async throws {
        try await withCheckedThrowingContinuation { (c: CheckedContinuation<Void, Swift.Error>) in
            DispatchQueue.global().async {
                do {
                    _ = try Realm(configuration: configuration)
                    c.resume()
                } catch {
                    c.resume(throwing: error)
                }
            }
        }
    }

    /// The Realm of `configuration` isolated to `actor`: the one open, or a new one. A new one is set up on the
    /// calling thread and then handed to the actor, before anything else can see it.
    static func actorCore(_ configuration: Realm.Configuration, _ actor: any Actor) throws -> RealmCore {
        if let core = ActorRealms.shared.core(for: actor, configuration) { return core }
        let core = try RealmCore(configuration: configuration)
        core.isolation = WeakActor(actor)
        ActorRealms.shared.remember(core, for: actor)
        return core
    }

    /// The Realm of `configuration` isolated to `actor`, opened synchronously (by code already isolated to it).
    init(configuration: Realm.Configuration, isolatedTo actor: isolated any Actor) throws {
        self.init(core: try Realm.actorCore(configuration, actor))
    }

    /// Whether this Realm is isolated to an actor (`Realm(configuration:actor:)`).
    var isActorIsolated: Bool { rlm.isolation != nil }

    /// Runs `block` in a write transaction and commits it, like `write`, but waits for the write lock by
    /// suspending the calling task instead of blocking its thread. The Realm must be isolated to an actor. If
    /// `block` throws, or the task is cancelled before the write begins, nothing is written and the error is
    /// thrown. Before the block runs, the Realm advances to the newest version and delivers notifications.
    @discardableResult
    public func asyncWrite<Result>(_isolation actor: isolated any Actor = #isolation,
                                   _ block: () throws -> Result) async throws -> Result {
        guard isActorIsolated else {
            preconditionFailure("asyncWrite() can only be called on actor-isolated Realms (Realm(configuration:actor:))")
        }
        // The writer lock belongs to a thread: it is taken, used and released with no suspension between, so the
        // whole transaction runs on one thread. Waiting for it suspends instead.
        while try !beginWriteIfFree() {
            try await Task.sleep(nanoseconds: 1_000_000)
        }
        let result: Result
        do {
            try Task.checkCancellation()
            result = try block()
        } catch {
            if isInWriteTransaction { cancelWrite() }
            throw error
        }
        if isInWriteTransaction { try commitWrite() }
        return result
    }

    /// Advances to the newest committed version and delivers notifications, as `refresh()`; true if the version
    /// changed. The Realm must be isolated to an actor.
    @discardableResult
    public func asyncRefresh(_isolation actor: isolated any Actor = #isolation) async -> Bool {
        guard isActorIsolated else {
            preconditionFailure("asyncRefresh() can only be called on actor-isolated Realms (Realm(configuration:actor:))")
        }
        return refresh()
    }
}
