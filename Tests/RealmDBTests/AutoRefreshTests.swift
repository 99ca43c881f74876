import Foundation
import Testing
@testable import RealmDB
import TestSupport

/// State shared between a test and the queue its Realm is bound to; every access happens on that queue or
/// after a semaphore handed it over (so it is `@unchecked Sendable`).
final class QueueBox: @unchecked Sendable {
    var realm: Realm?
    var token: NotificationToken?
    var updates: [(deletions: [Int], insertions: [Int], names: [String])] = []
    var realmNotifications: [Realm.Notification] = []
}

/// The `realm-storage-worker` executable, built beside the test bundle.
func workerPath() throws -> String {
    let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    var candidates = [URL(fileURLWithPath: exe).deletingLastPathComponent().appendingPathComponent("realm-storage-worker").path]
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    candidates += ["debug", "release"].map { root.appendingPathComponent(".build/\($0)/realm-storage-worker").path }
    guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
        throw RealmError.invalidConfiguration("realm-storage-worker not found (build with --build-tests); looked at \(candidates)")
    }
    return found
}

@Suite struct AutoRefreshTests {
    /// Opens a Realm bound to `queue` and observes its dogs, recording every update in the box.
    func observeDogs(_ config: Realm.Configuration, on queue: DispatchQueue, signal: DispatchSemaphore) -> QueueBox {
        let box = QueueBox()
        queue.sync {
            let realm = try! Realm(configuration: config, queue: queue)
            box.realm = realm
            box.token = realm.objects(Dog.self).observe { change in
                if case .update(let r, let d, let i, _) = change {
                    box.updates.append((d, i, r.map(\.name)))
                    signal.signal()
                }
            }
        }
        return box
    }

    @Test func queueBoundRealmIsConfinedToItsQueue() throws {
        let config = Realm.Configuration(inMemoryIdentifier: "queue-\(UUID())", objectTypes: [Dog.self, Person.self])
        let queue = DispatchQueue(label: "confined")
        let box = QueueBox()
        queue.sync {
            box.realm = try! Realm(configuration: config, queue: queue)
            #expect(box.realm!.rlm.isOnOwnThread)
            #expect(try! Realm(configuration: config, queue: queue) == box.realm!)
        }
        #expect(!box.realm!.rlm.isOnOwnThread)
        // Another block on the same queue, perhaps on another thread, may use it.
        DispatchQueue.global().sync { }
        queue.sync { #expect(box.realm!.objects(Dog.self).isEmpty) }
    }

    @Test func queueBoundRealmHearsOfAnotherThreadsCommit() throws {
        let dir = TempDir()
        let config = fileConfig(dir, [Dog.self, Person.self])
        let queue = DispatchQueue(label: "observer")
        let got = DispatchSemaphore(value: 0)
        let box = observeDogs(config, on: queue, signal: got)
        let writer = Thread {
            let w = try! Realm(configuration: config)
            try! w.write { w.create(Dog.self, value: ["name": "Rex"]) }
        }
        writer.start()
        #expect(got.wait(timeout: .now() + 10) == .success)
        queue.sync {
            #expect(box.updates.count == 1)
            #expect(box.updates.first?.insertions == [0])
            #expect(box.updates.first?.names == ["Rex"])
            box.token?.invalidate()
            box.realm = nil
        }
    }

    @Test func queueBoundRealmHearsOfAnotherProcesssCommit() throws {
        let dir = TempDir()
        let config = fileConfig(dir, [Dog.self, Person.self])
        let queue = DispatchQueue(label: "observer")
        let got = DispatchSemaphore(value: 0)
        let box = observeDogs(config, on: queue, signal: got)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: try workerPath())
        p.arguments = ["append-objects", config.fileURL!.path, "Dog", "name", "3"]
        try p.run()
        p.waitUntilExit()
        #expect(p.terminationStatus == 0)
        #expect(got.wait(timeout: .now() + 10) == .success)
        queue.sync {
            #expect(box.updates.count == 1)
            #expect(box.updates.first?.insertions == [0, 1, 2])
            #expect(box.updates.first?.names == ["w0", "w1", "w2"])
            box.token?.invalidate()
            box.realm = nil
        }
    }

    @Test func withoutAutorefreshObserversAreToldARefreshIsRequired() throws {
        let dir = TempDir()
        let config = fileConfig(dir, [Dog.self, Person.self])
        let queue = DispatchQueue(label: "observer")
        let got = DispatchSemaphore(value: 0)
        let box = QueueBox()
        queue.sync {
            let realm = try! Realm(configuration: config, queue: queue)
            realm.autorefresh = false
            box.realm = realm
            box.token = realm.observe { n, _ in
                box.realmNotifications.append(n)
                got.signal()
            }
        }
        Thread {
            let w = try! Realm(configuration: config)
            try! w.write { w.create(Dog.self, value: ["name": "Rex"]) }
        }.start()
        #expect(got.wait(timeout: .now() + 10) == .success)
        queue.sync {
            #expect(box.realmNotifications == [.refreshRequired])
            #expect(box.realm!.objects(Dog.self).isEmpty)
            #expect(box.realm!.refresh())
            #expect(box.realmNotifications == [.refreshRequired, .didChange])
            #expect(box.realm!.objects(Dog.self).count == 1)
            box.token?.invalidate()
            box.realm = nil
        }
    }

    @Test func plainThreadRealmsWaitForRefresh() throws {
        let dir = TempDir()
        let config = fileConfig(dir, [Dog.self, Person.self])
        let done = DispatchSemaphore(value: 0)
        let box = QueueBox()
        // This test's own thread is a plain thread (not the main thread, no queue).
        let realm = try Realm(configuration: config)
        var calls = 0
        let token = realm.objects(Dog.self).observe { if case .update = $0 { calls += 1 } }
        Thread {
            let w = try! Realm(configuration: config)
            try! w.write { w.create(Dog.self) }
            done.signal()
        }.start()
        done.wait()
        Thread.sleep(forTimeInterval: 0.1)
        #expect(calls == 0)
        realm.refresh()
        #expect(calls == 1)
        token.invalidate()
        _ = box
    }
}
