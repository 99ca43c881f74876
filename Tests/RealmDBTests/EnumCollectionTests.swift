import Foundation
import Testing
@testable import RealmDB
import TestSupport

final class Board: Object {
    @Persisted var name = ""
    @Persisted var statuses: MutableSet<TaskStatus>
    @Persisted var byOwner: Map<String, TaskPriority>
    @Persisted var maybe: Map<String, TaskStatus?>
}

/// Persisted enums in sets and maps, stored as their raw values.
@Suite struct EnumCollectionTests {
    @Test func enumsInSetsAndMaps() throws {
        let realm = try memoryRealm([Board.self])
        let b = Board()
        b.statuses.insert(.open)
        b.byOwner["アン"] = .high
        try realm.write { realm.add(b) }
        try realm.write {
            b.statuses.insert(.done)
            b.statuses.insert(.open)
            b.maybe["x"] = .some(nil)
            b.maybe["y"] = .done
        }
        #expect(b.statuses.count == 2 && b.statuses.contains(.done))
        #expect(b.byOwner["アン"] == .high && b.maybe["y"] == .done)
        #expect(realm.objects(Board.self).filter("'done' IN statuses").count == 1)
        #expect(realm.objects(Board.self).filter("byOwner['アン'] == %@", TaskPriority.high.rawValue).count == 1)
        #expect(realm.objects(Board.self).where { $0.statuses.contains(.done) }.count == 1)
    }
}
