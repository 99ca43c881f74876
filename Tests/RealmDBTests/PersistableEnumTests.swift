import Foundation
import Testing
@testable import RealmDB
import RealmStorage
import TestSupport

enum TaskStatus: String, PersistableEnum {
    case open
    case inProgress
    case done
}

enum TaskPriority: Int, PersistableEnum {
    case low = 1
    case medium = 5
    case high = 10
}

enum EnumByte: Int8, PersistableEnum { case one = 1, two = 2 }
enum EnumWide: Int64, PersistableEnum { case big = 9_000_000_000, small = -1 }
enum EnumRatio: Double, PersistableEnum { case half = 0.5, third = 0.333 }
enum EnumScale: Float, PersistableEnum { case tenth = 0.1, double = 2 }

final class EnumTask: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var title = ""
    @Persisted var status = TaskStatus.open
    @Persisted(indexed: true) var priority: TaskPriority
    @Persisted var reviewed: TaskStatus?
    @Persisted var history: List<TaskStatus>
    @Persisted var votes: List<TaskPriority?>
}

final class EnumWidths: Object {
    @Persisted var byte: EnumByte
    @Persisted var wide = EnumWide.small
    @Persisted var ratio: EnumRatio?
    @Persisted var scale = EnumScale.double
    @Persisted var any: AnyRealmValue
}

final class EnumKeyed: Object {
    @Persisted(primaryKey: true) var level: TaskPriority
    @Persisted var note = ""
}

/// Enums with a raw value as property, optional and list element types: stored as their raw values.
@Suite struct PersistableEnumTests {
    func seeded() throws -> Realm {
        let realm = try memoryRealm([EnumTask.self])
        try realm.write {
            realm.create(EnumTask.self, value: ["id": 1, "title": "a", "status": TaskStatus.done, "priority": TaskPriority.high])
            realm.create(EnumTask.self, value: ["id": 2, "title": "b", "status": "inProgress", "priority": 5])
            realm.create(EnumTask.self, value: ["id": 3, "title": "c", "reviewed": TaskStatus.done,
                                                    "history": [TaskStatus.open, "done"]])
        }
        return realm
    }

    @Test func theRawTypeIsThePropertyType() throws {
        let schema = EnumTask().objectSchema
        #expect(schema["status"]?.type == .string)
        #expect(schema["status"]?.typeName == "string")
        #expect(schema["priority"]?.typeName == "int")
        #expect(schema["priority"]?.isIndexed == true)
        #expect(schema["reviewed"]?.typeName == "string?")
        #expect(schema["history"]?.typeName == "[string]")
        #expect(schema["votes"]?.typeName == "[int?]")
        let widths = EnumWidths().objectSchema
        #expect(widths.properties.map(\.typeName) == ["int", "int", "double?", "float", "mixed?"])
        let realm = try memoryRealm([EnumTask.self, EnumKeyed.self])
        #expect(realm.schema["EnumTask"] == schema)
        #expect(realm.schema["EnumKeyed"]?.primaryKeyProperty?.typeName == "int")
    }

    @Test func defaultsAreTheDeclaredValueOrTheFirstCase() throws {
        let task = EnumTask()
        #expect(task.status == .open)
        #expect(task.priority == .low)
        #expect(task.reviewed == nil)
        #expect(TaskPriority() == .low)
        #expect(EnumWidths().byte == .one)
        #expect(EnumWidths().wide == .small)
        let realm = try memoryRealm([EnumTask.self])
        try realm.write { realm.add(EnumTask(value: ["id": 9])) }
        let stored = try #require(realm.object(ofType: EnumTask.self, forPrimaryKey: 9))
        #expect(stored.status == .open && stored.priority == .low && stored.reviewed == nil)
        let dynamic = try #require(realm.dynamicObject(ofType: "EnumTask", forPrimaryKey: 9))
        #expect(dynamic["status"] as? String == "open")
        #expect(dynamic["priority"] as? Int == 1)
    }

    @Test func valuesRoundTripThroughTheFileAsRawValues() throws {
        let dir = TempDir()
        let config = fileConfig(dir, [EnumTask.self])
        try {
            let realm = try Realm(configuration: config)
            let task = EnumTask()
            task.id = 1
            task.status = .inProgress
            task.priority = .medium
            task.history.append(objectsIn: [.done, .open])
            try realm.write { realm.add(task) }
            try realm.write {
                task.status = .done
                task.reviewed = .inProgress
                task.history.append(.inProgress)
                task.votes.append(objectsIn: [.high, nil])
            }
            #expect(task.status == .done)
        }()
        let realm = try Realm(configuration: config)
        let task = try #require(realm.object(ofType: EnumTask.self, forPrimaryKey: 1))
        #expect(task.status == .done)
        #expect(task.priority == .medium)
        #expect(task.reviewed == .inProgress)
        #expect(Array(task.history) == [.done, .open, .inProgress])
        #expect(Array(task.votes) == [.high, nil])
        #expect(task.history.index(of: .open) == 1)
        try realm.write { task.reviewed = nil; task.history[0] = .open }
        #expect(task.reviewed == nil && task.history.first == .open)

        // What the file holds: raw values, as any tool reads them.
        let dynamic = try #require(realm.dynamicObjects("EnumTask").first)
        #expect(dynamic["status"] as? String == "done")
        #expect(dynamic["priority"] as? Int == 5)
        #expect(dynamic["history"] as? [Any?] != nil)
        #expect((dynamic["history"] as? [Any?])?.compactMap { $0 as? String } == ["open", "open", "inProgress"])
        let stored = try realm.rlm.database.read { s -> [RealmStorage.Value] in
            let t = try s.table("EnumTask")
            guard let key = try s.object(t, primaryKey: .int(1)) else { return [] }
            return [try s.value(key, try s.property(t, "status")), try s.value(key, try s.property(t, "priority"))]
        }
        #expect(stored == [.string("done"), .int(5)])
    }

    @Test func everyRawTypeRoundTrips() throws {
        let realm = try memoryRealm([EnumWidths.self])
        try realm.write {
            realm.create(EnumWidths.self, value: ["byte": EnumByte.two, "wide": EnumWide.big, "ratio": 0.333,
                                                      "scale": EnumScale.tenth, "any": TaskStatus.done])
        }
        let w = try #require(realm.objects(EnumWidths.self).first)
        #expect(w.byte == .two && w.wide == .big && w.ratio == .third && w.scale == .tenth)
        // An enum given for a mixed property is its raw value, as realm-swift bridges it.
        #expect(w.any == .string("done"))
        #expect(realm.objects(EnumWidths.self).filter("wide > 8000000000 AND scale < 0.5 AND ratio == $0", EnumRatio.third).count == 1)
    }

    @Test func queriesCompareRawValues() throws {
        let tasks = try seeded().objects(EnumTask.self)
        #expect(tasks.filter("status == 'done'").map(\.id) == [1])
        #expect(tasks.filter("priority > 2").map(\.id) == [1, 2])
        #expect(tasks.filter("status == $0", TaskStatus.inProgress).map(\.id) == [2])
        #expect(tasks.filter("status == $0", TaskStatus.inProgress.rawValue).map(\.id) == [2])
        #expect(tasks.filter("priority IN $0", [TaskPriority.low, TaskPriority.high]).map(\.id) == [1, 3])
        #expect(tasks.filter("reviewed == $0", TaskStatus.done).map(\.id) == [3])
        #expect(tasks.filter("reviewed == nil").map(\.id) == [1, 2])
        #expect(tasks.filter("ANY history == $0", TaskStatus.done).map(\.id) == [3])
        #expect(tasks.filter { $0.status != .open }.map(\.id) == [1, 2])
    }

    @Test func sortingAndAggregatesUseRawValues() throws {
        let tasks = try seeded().objects(EnumTask.self)
        #expect(tasks.sorted(byKeyPath: "priority").map(\.priority) == [.low, .medium, .high])
        #expect(tasks.sorted(byKeyPath: "status", ascending: false).map(\.status) == [.open, .inProgress, .done])
        #expect(tasks.min(ofProperty: "priority") as TaskPriority? == .low)
        #expect(tasks.max(ofProperty: "priority") as TaskPriority? == .high)
        #expect(tasks.max(ofProperty: "status") as TaskStatus? == .open)
        #expect(tasks.sum(ofProperty: "priority") as Int == 16)
        #expect(tasks.map(\.priority).sorted() == [.low, .medium, .high])
        #expect(TaskPriority.medium < .high && TaskStatus.done < .inProgress)
        #expect(tasks.distinct(by: ["reviewed"]).map(\.id) == [1, 3])
        let history = try #require(tasks.last?.history)
        #expect(history.max() == .open && history.min() == .done)
    }

    @Test func anEnumIsAPrimaryKey() throws {
        let realm = try memoryRealm([EnumKeyed.self])
        try realm.write {
            realm.add(EnumKeyed(value: ["level": TaskPriority.high, "note": "h"]))
            realm.create(EnumKeyed.self, value: ["level": TaskPriority.medium, "note": "m"])
            realm.create(EnumKeyed.self, value: ["level": TaskPriority.high, "note": "H"], update: .modified)
        }
        #expect(realm.object(ofType: EnumKeyed.self, forPrimaryKey: TaskPriority.high)?.note == "H")
        #expect(realm.object(ofType: EnumKeyed.self, forPrimaryKey: 5)?.level == .medium)
        #expect(realm.object(ofType: EnumKeyed.self, forPrimaryKey: TaskPriority.low) == nil)
    }

    /// As realm-swift: `object["prop"]` gives and takes raw values; an enum is accepted where a value is set.
    @Test func keyValueAccessGivesRawValues() throws {
        let unmanaged = EnumTask(value: ["status": TaskStatus.done, "priority": 10, "history": ["open", TaskStatus.done]])
        #expect(unmanaged.status == .done && unmanaged.priority == .high && Array(unmanaged.history) == [.open, .done])
        #expect(unmanaged["status"] as? String == "done")
        #expect(unmanaged["priority"] as? Int == 10)
        #expect(unmanaged["reviewed"] == nil)
        unmanaged["reviewed"] = TaskStatus.open
        #expect(unmanaged.reviewed == .open && unmanaged["reviewed"] as? String == "open")

        let realm = try memoryRealm([EnumTask.self])
        let task = try realm.write { realm.create(EnumTask.self, value: unmanaged) }
        #expect(task.status == .done && task.reviewed == .open && Array(task.history) == [.open, .done])
        #expect(task["status"] as? String == "done")
        #expect(task["reviewed"] as? String == "open")
        try realm.write {
            task["status"] = TaskStatus.inProgress
            task["priority"] = 5
            task["reviewed"] = nil
        }
        #expect(task.status == .inProgress && task.priority == .medium && task.reviewed == nil)
        #expect(task.description.contains("status = \"inProgress\";"))
        #expect(task.description.contains("priority = 5;"))
    }

    /// realm-swift's rule: a stored value that is the raw value of no case reads as nil where nil is possible.
    @Test func aRawValueOfNoCaseIsNilWhenOptional() throws {
        let realm = try memoryRealm([EnumTask.self])
        let task = try realm.write { realm.create(EnumTask.self, value: ["id": 1]) }
        try realm.write {
            task["reviewed"] = "archived"
            task["votes"] = [10, 7, nil]
        }
        #expect(task.reviewed == nil)
        #expect(task["reviewed"] == nil)
        #expect(Array(task.votes) == [.high, nil, nil])
        #expect(realm.dynamicObjects("EnumTask").first?["reviewed"] as? String == "archived")
        #expect(realm.objects(EnumTask.self).filter("reviewed == 'archived'").count == 1)
        // Unmanaged, the same value is nil at once.
        let unmanaged = EnumTask()
        unmanaged["reviewed"] = "archived"
        #expect(unmanaged.reviewed == nil)
        // A value of another type is still an error.
        #expect(throws: RealmError.self) { try unmanaged.setValue(3, forProperty: "reviewed") }
        // A stored 300 is no Int8 raw value, rather than 300 truncated to 44.
        #expect(EnumByte._rlmFromStoredInsideOptional(.int(300), realm) == nil)
        #expect(EnumByte._rlmFromStoredInsideOptional(.int(2), realm) == .two)
    }

    @Test func aRawValueOfNoCaseStopsANonOptionalRead() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let realm = try! memoryRealm([EnumTask.self])
            let task = try! realm.write { realm.create(EnumTask.self, value: ["id": 1]) }
            try! realm.write { task["status"] = "archived" }
            // Key-value access still reads it, as the raw value.
            precondition(task["status"] as? String == "archived")
            _ = task.status
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("the value stored in EnumTask.status is the raw value of no case of TaskStatus"))
    }

    @Test func aRawValueOfNoCaseStopsANonOptionalListElement() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let realm = try! memoryRealm([EnumTask.self])
            let task = try! realm.write { realm.create(EnumTask.self, value: ["id": 1]) }
            try! realm.write { task["history"] = ["open", "archived"] }
            precondition(task.history.count == 2 && task.history[0] == .open)
            _ = task.history[1]
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("a stored String is the raw value of no case of TaskStatus"))
    }

    @Test func notificationsCarryRawValues() throws {
        let realm = try seeded()
        let task = try #require(realm.object(ofType: EnumTask.self, forPrimaryKey: 2))
        var changes: [[PropertyChange]] = []
        let token = task.observe { (change: ObjectChange<EnumTask>) in
            if case .change(_, let props) = change { changes.append(props) }
        }
        defer { token.invalidate() }
        var counts: [Int] = []
        let done = realm.objects(EnumTask.self).filter("status == $0", TaskStatus.done)
        let resultsToken = done.observe { change in
            switch change {
            case .initial(let r): counts.append(r.count)
            case .update(let r, _, _, _): counts.append(r.count)
            case .error: Issue.record("unexpected error")
            }
        }
        defer { resultsToken.invalidate() }
        try realm.write { task.status = .done; task.reviewed = .open }
        let props = try #require(changes.last)
        #expect(props.map(\.name) == ["status", "reviewed"])
        #expect(props[0].oldValue as? String == "inProgress" && props[0].newValue as? String == "done")
        #expect(props[1].oldValue == nil && props[1].newValue as? String == "open")
        #expect(counts == [1, 2])
    }
}

// MARK: - Migrations: an enum's raw type changing is a property type change

enum ShirtSizeV0: Int, PersistableEnum { case small = 1, medium, large }
enum ShirtSizeV1: String, PersistableEnum { case small = "S", medium = "M", large = "L" }

final class ShirtV0: Object {
    @Persisted var name = ""
    @Persisted(indexed: true) var size = ShirtSizeV0.medium
    @Persisted var stock: List<ShirtSizeV0>
    override class func className() -> String { "Shirt" }
}

final class ShirtV1: Object {
    @Persisted var name = ""
    @Persisted(indexed: true) var size = ShirtSizeV1.medium
    @Persisted var stock: List<ShirtSizeV1>
    override class func className() -> String { "Shirt" }
}

@Suite struct PersistableEnumMigrationTests {
    func seed(_ dir: TempDir) throws {
        try withRealm(migrationConfig(dir, [ShirtV0.self], 0)) { r in
            try r.write {
                r.add(ShirtV0(value: ["name": "a", "size": ShirtSizeV0.large, "stock": [ShirtSizeV0.small, .large]]))
                r.add(ShirtV0(value: ["name": "b"]))
            }
        }
    }

    @Test func aNewRawTypeNeedsAHigherSchemaVersion() throws {
        let dir = TempDir()
        try seed(dir)
        do {
            _ = try Realm(configuration: migrationConfig(dir, [ShirtV1.self], 0))
            Issue.record("expected a schema mismatch")
        } catch let e as RealmError {
            guard case .schemaMismatch(_, let diffs) = e else { Issue.record("\(e)"); return }
            #expect(diffs.contains { $0.contains("'Shirt.size'") && $0.contains("from int to string") }, "\(diffs)")
        }
    }

    @Test func theMigrationBlockConvertsRawValues() throws {
        let dir = TempDir()
        try seed(dir)
        let names = [1: "S", 2: "M", 3: "L"]
        let config = migrationConfig(dir, [ShirtV1.self], 1) { m, _ in
            m.enumerateObjects(ofType: "Shirt") { old, new in
                // Old and new objects read raw values, as in realm-swift.
                new!["size"] = names[old!["size"] as! Int]
                new!["stock"] = (old!["stock"] as! [Any?]).map { names[$0 as! Int]! }
            }
        }
        try withRealm(config) { r in
            let shirts = r.objects(ShirtV1.self).sorted(byKeyPath: "name")
            #expect(shirts.map(\.size) == [.large, .medium])
            #expect(shirts.map { Array($0.stock) } == [[.small, .large], []])
            #expect(r.schema["Shirt"]?["size"]?.typeName == "string")
            #expect(r.schema["Shirt"]?["size"]?.isIndexed == true)
            #expect(r.objects(ShirtV1.self).filter("size == 'L'").map(\.name) == ["a"])
        }
        try expectSound(config, version: 1)
    }
}
