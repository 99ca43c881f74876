import Foundation
import Testing
@testable import RealmDB
import TestSupport

final class Classroom: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var students: List<Student>
    @Persisted var scores: List<Int>
    @Persisted var labels: List<String>
    @Persisted var optScores: List<Int?>
    @Persisted var prices: List<Decimal128>
}

final class Student: Object {
    @Persisted var name = ""
    @Persisted var age = 0
    @Persisted(originProperty: "students") var classrooms: LinkingObjects<Classroom>
}

/// Properties declared in the older styles.
final class LegacyRecord: Object {
    @Persisted var name = ""
    let score = RealmProperty<Int?>()
    let anything = RealmProperty<AnyRealmValue>()
    @available(*, deprecated)
    let legacyAge = RealmOptional<Int>()
}

// Code generic over realm-swift's collection protocol, as an app writes it.

/// The names of the students older than `age`, youngest first, and the oldest age.
func olderThan<C: RealmCollection>(_ students: C, _ age: Int) -> (names: [String], oldest: Int?) where C.Element == Student {
    let older = students.filter("age > %@", age).sorted(byKeyPath: "age")
    return (older.map(\.name), students.max(ofProperty: "age"))
}

/// How many elements of any collection match a query, and where the first one is.
func matching<C: RealmCollection>(_ collection: C, _ query: String) -> (count: Int, first: Int?) {
    (collection.filter(query).count, collection.index(matching: query))
}

/// Statistics of any collection of numbers.
func stats<C: RealmCollection>(_ numbers: C) -> (min: C.Element?, max: C.Element?, sum: C.Element, sorted: [C.Element])
where C.Element: MinMaxType & AddableType & SortableType {
    (numbers.min(), numbers.max(), numbers.sum(), Array(numbers.sorted()))
}

@Suite struct RealmCollectionTests {
    func classroom() throws -> (Realm, Classroom) {
        let realm = try memoryRealm([Classroom.self, Student.self])
        let c = try realm.write {
            realm.create(Classroom.self, value: [
                "id": 1,
                "students": [["name": "Ann", "age": 12], ["name": "Bob", "age": 15], ["name": "Cy", "age": 9], ["name": "Di", "age": 14]],
                "scores": [5, 1, 4, 1, 3],
                "labels": ["apple", "Avocado", "banana", "apple"],
                "optScores": [3, nil, 7],
                "prices": [Decimal128(string: "0.1")!, Decimal128(string: "0.2")!],
            ] as [String: Any])
        }
        return (realm, c)
    }

    @Test func oneGenericFunctionServesResultsListsAndAnyRealmCollection() throws {
        let (realm, c) = try classroom()
        let all = realm.objects(Student.self)
        #expect(olderThan(all, 11).names == ["Ann", "Di", "Bob"])
        #expect(olderThan(all, 11).oldest == 15)
        #expect(olderThan(c.students, 12).names == ["Di", "Bob"])
        #expect(olderThan(AnyRealmCollection(c.students), 13).names == ["Di", "Bob"])
        #expect(olderThan(AnyRealmCollection(all.filter("name != 'Bob'")), 0).oldest == 14)

        // Several kinds of collection in one array.
        let collections: [AnyRealmCollection<Student>] = [AnyRealmCollection(all), AnyRealmCollection(c.students),
                                                          AnyRealmCollection(all.sorted(byKeyPath: "name", ascending: false))]
        #expect(collections.map(\.count) == [4, 4, 4])
        #expect(collections.map { $0.first?.name } == ["Ann", "Ann", "Di"])
        #expect(collections.map { $0.last?.name } == ["Di", "Di", "Ann"])
        #expect(collections[2].index(of: c.students[1]) == 2)
        #expect(collections[1].sorted(by: ["age"]).first?.name == "Cy")
        #expect(collections[1].sorted(by: [SortDescriptor(keyPath: "age", ascending: false), "name"]).first?.name == "Bob")
        #expect(collections[1].realm == realm)
        #expect(!collections[1].isInvalidated)
        #expect(AnyRealmCollection(collections[0]).count == 4)
    }

    @Test func linkingObjectsAreACollectionToo() throws {
        let (realm, c) = try classroom()
        let second = try realm.write {
            realm.create(Classroom.self, value: ["id": 2, "students": [c.students[0]], "scores": [100]] as [String: Any])
        }
        let ann = c.students[0]
        #expect(matching(ann.classrooms, "id == 2").count == 1)
        #expect(matching(ann.classrooms, "id == 2").first == ann.classrooms.index(of: second))
        #expect(matching(c.students[1].classrooms, "id == 2").count == 0)
        let anyRooms = AnyRealmCollection(ann.classrooms)
        #expect(anyRooms.count == 2)
        #expect(anyRooms.sum(ofProperty: "id") == 3)
        #expect(anyRooms.sorted(byKeyPath: "id", ascending: false).first?.id == 2)
        #expect(anyRooms.distinct(by: ["id"]).count == 2)
        #expect(matching(c.students, "name BEGINSWITH 'D'") == (1, 3))
        #expect(matching(realm.objects(Student.self), "age < 10") == (1, 2))
    }

    @Test func listOfPrimitivesSortsFiltersAndAggregates() throws {
        let (_, c) = try classroom()
        #expect(Array(c.scores.sorted()) == [1, 1, 3, 4, 5])
        #expect(Array(c.scores.sorted(ascending: false)) == [5, 4, 3, 1, 1])
        #expect(Array(c.scores.filter("self > 3")) == [5, 4])
        #expect(Array(c.scores.filter("self IN %@", [1, 3])) == [1, 1, 3])
        #expect(Array(c.scores.filter("self BETWEEN {2, 4}")) == [4, 3])
        #expect(Array(c.scores.filter("3 < self OR self == $0", 1)) == [5, 1, 4, 1])
        #expect(Array(c.scores.filter("self > 1 SORT(self DESC) LIMIT(2)")) == [5, 4])
        #expect(Array(c.scores.distinct()) == [5, 1, 4, 3])
        #expect(Array(c.scores.filter("self < 5").sorted().distinct()) == [1, 3, 4])
        #expect(c.scores.min() == 1)
        #expect(c.scores.max() == 5)
        #expect(c.scores.sum() == 14)
        #expect(c.scores.average() == 2.8)
        #expect(c.scores.filter("self > 3").sum() == 9)
        #expect(c.scores.index(of: 4) == 2)
        #expect(c.scores.index(matching: "self < 2") == 1)
        #expect(c.scores.sorted().index(of: 3) == 2)
        let s = stats(c.scores)
        #expect(s.min == 1 && s.max == 5 && s.sum == 14 && s.sorted == [1, 1, 3, 4, 5])
        #expect(stats(AnyRealmCollection(c.scores.filter("self != 1"))).sorted == [3, 4, 5])

        #expect(Array(c.labels.filter("self BEGINSWITH[c] 'a'")) == ["apple", "Avocado", "apple"])
        #expect(Array(c.labels.sorted()) == ["Avocado", "apple", "apple", "banana"])
        #expect(Array(c.labels.distinct()) == ["apple", "Avocado", "banana"])
        #expect(c.labels.filter("self CONTAINS 'an'").first == "banana")

        #expect(c.optScores.filter("self == nil").count == 1)
        #expect(Array(c.optScores.sorted()) == [nil, 3, 7])
        #expect(c.optScores.min() == 3)
        #expect(c.optScores.sum() == 10)

        // Decimals are summed exactly (as decimals, not doubles).
        #expect(c.prices.sum() == Decimal128(string: "0.3")!)
        #expect(c.prices.filter("self > 0.15").count == 1)
    }

    @Test func resultsOfValuesFollowTheList() throws {
        let (realm, c) = try classroom()
        let high = c.scores.filter("self >= 4").sorted()
        #expect(Array(high) == [4, 5])
        #expect(high.description == "Results<Int> (2 values)")
        try realm.write {
            c.scores.append(10)
            c.scores[0] = 0
        }
        #expect(Array(high) == [4, 10])
        #expect(high.realm == realm)
        try realm.write { realm.delete(c) }
        #expect(high.isEmpty)
    }

    @Test func queriesOnValuesAreCheckedAgainstTheirType() throws {
        let (_, c) = try classroom()
        func queryError(_ body: () throws -> Any) -> String? {
            do { _ = try body() } catch let RealmError.query(e) { return e.message } catch {}
            return nil
        }
        #expect(queryError { try c.scores.filter(query: "age > 3") }?.contains("'self'") == true)
        #expect(queryError { try c.scores.filter(query: "self BEGINSWITH 'a'") }?.contains("strings") == true)
        #expect(queryError { try c.labels.filter(query: "self > 3") }?.contains("type mismatch") == true)
        #expect(queryError { try c.scores.filter(query: "ANY self > 3") } != nil)
        #expect(queryError { try c.scores.filter(query: "self > 3") } == nil)
    }

    @Test func unmanagedListsAggregateAndFind() {
        let numbers = List<Int>()
        numbers.append(objectsIn: [4, 2, 9])
        #expect(numbers.min() == 2)
        #expect(numbers.max() == 9)
        #expect(numbers.sum() == 15)
        #expect(numbers.average() == 5.0)
        #expect(numbers.index(of: 9) == 2)
        #expect(numbers.index(of: 7) == nil)
        let students = List<Student>()
        students.append(Student(value: ["name": "Ed", "age": 30]))
        students.append(Student(value: ["name": "Fay", "age": 20]))
        #expect(students.max(ofProperty: "age") == 30)
        #expect(students.average(ofProperty: "age") == 25.0)
        #expect(students.value(forKey: "name") as? [String] == ["Ed", "Fay"])
    }

    @Test func keyValueCodingOverCollections() throws {
        let (realm, c) = try classroom()
        let byName = realm.objects(Student.self).sorted(byKeyPath: "name")
        #expect(byName.value(forKey: "name") as? [String] == ["Ann", "Bob", "Cy", "Di"])
        #expect(c.students.value(forKeyPath: "@count") as? Int == 4)
        #expect(c.scores.value(forKey: "self") as? [Int] == [5, 1, 4, 1, 3])
        try realm.write { c.students.filter("age < 13").setValue(13, forKey: "age") }
        #expect(byName.map(\.age) == [13, 15, 13, 14])
        #expect(AnyRealmCollection(byName).value(forKey: "age") as? [Int] == [13, 15, 13, 14])
    }

    @Test func observeThroughAnyRealmCollection() throws {
        let (realm, c) = try classroom()
        let students = AnyRealmCollection(c.students)
        let log = ChangeLog<AnyRealmCollection<Student>>()
        let token = students.observe { log.record($0) }
        defer { token.invalidate() }
        #expect(log.entries.count == 1)
        try realm.write { c.students.append(Student(value: ["name": "Eve"])) }
        #expect(log.last?.insertions == [4])

        let scores = AnyRealmCollection(c.scores)
        let scoreLog = ChangeLog<AnyRealmCollection<Int>>()
        var seen: [[Int]] = []
        let scoreToken = scores.observe { change in
            scoreLog.record(change)
            if case .update(let collection, _, _, _) = change { seen.append(Array(collection)) }
        }
        defer { scoreToken.invalidate() }
        let before = Array(c.scores)
        try realm.write {
            c.scores.append(8)
            c.scores.remove(at: 1)
        }
        let after = Array(c.scores)
        let u = try #require(scoreLog.last)
        #expect(u.deletions == [1])
        #expect(u.insertions == [4])
        #expect(apply(before, deletions: u.deletions, insertions: u.insertions, from: after) == after)
        #expect(seen == [[5, 4, 1, 3, 8]])

        // Results of values notify as well; a change elsewhere does not.
        let sortedLog = ChangeLog<Results<Int>>()
        let sortedToken = c.scores.sorted().observe { sortedLog.record($0) }
        defer { sortedToken.invalidate() }
        try realm.write { realm.create(Student.self, value: ["name": "Zed"]) }
        #expect(sortedLog.updates.isEmpty)
        try realm.write { c.scores.append(0) }
        #expect(sortedLog.last?.insertions == [0])
    }

    @available(*, deprecated)
    @Test func realmPropertyAndRealmOptional() throws {
        let realm = try memoryRealm([LegacyRecord.self])
        let schema = try #require(realm.schema["LegacyRecord"])
        #expect(schema["score"]?.type == .int && schema["score"]?.isOptional == true)
        #expect(schema["legacyAge"]?.type == .int && schema["legacyAge"]?.isOptional == true)
        #expect(schema["anything"]?.type == .mixed)

        let r = LegacyRecord()
        r.name = "a"
        r.score.value = 7
        r.anything.value = .string("hello")
        #expect(r.legacyAge.value == nil)
        try realm.write { realm.add(r) }
        try realm.write { realm.create(LegacyRecord.self, value: ["name": "b", "score": 2, "legacyAge": 40]) }
        let records = realm.objects(LegacyRecord.self).sorted(byKeyPath: "name")
        #expect(records.map(\.score.value) == [7, 2])
        #expect(records[0].anything.value == .string("hello"))
        #expect(records[1].legacyAge.value == 40)
        #expect(records.filter("score > 3").map(\.name) == ["a"])
        try realm.write {
            r.score.value = nil
            r.legacyAge.value = 30
        }
        #expect(records[0].score.value == nil)
        #expect(records.filter("legacyAge >= 30").count == 2)
        #expect(records.value(forKey: "score") as? [Any] != nil)
    }

    @Test func resultsOfValuesCrossThreadsByReference() throws {
        let dir = TempDir()
        let config = fileConfig(dir, [Classroom.self, Student.self])
        let realm = try Realm(configuration: config)
        let c = try realm.write { realm.create(Classroom.self, value: ["id": 1, "scores": [3, 9, 1, 7]] as [String: Any]) }
        let ref = ThreadSafeReference(to: c.scores.filter("self > 2").sorted(ascending: false))
        nonisolated(unsafe) var seen: [Int] = []
        onOtherThread {
            let realm = try! Realm(configuration: config)
            seen = realm.resolve(ref).map { Array($0) } ?? []
        }
        #expect(seen == [9, 7, 3])
    }
}
