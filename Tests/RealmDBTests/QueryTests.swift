import Foundation
import Testing
@testable import RealmDB
import RealmQuery
import TestSupport

@Suite struct QueryTests {
    func populated() throws -> Realm {
        let realm = try memoryRealm([Dog.self, Person.self])
        try realm.write {
            let ann = realm.create(Person.self, value: ["id": 1, "name": "Ann", "age": 30, "tags": ["a", "東京"]])
            let bob = realm.create(Person.self, value: ["id": 2, "name": "Bob", "nickname": "Bobby", "age": 25])
            for (i, n) in ["Rex", "Fido", "Ace", "Bo", "Ace"].enumerated() {
                let d = realm.create(Dog.self, value: ["name": n, "age": i + 1, "owner": i % 2 == 0 ? ann : bob])
                (i < 3 ? ann : bob).dogs.append(d)
            }
        }
        return realm
    }

    @Test func filterWithArguments() throws {
        let realm = try populated()
        let dogs = realm.objects(Dog.self)
        #expect(dogs.filter("age > 2 AND name BEGINSWITH $0", "A").map(\.name) == ["Ace", "Ace"])
        #expect(dogs.filter("owner.name == $0", "Bob").map(\.name) == ["Fido", "Bo"])
        #expect(dogs.filter("name IN $0", ["Rex", "Bo"]).count == 2)
        #expect(dogs.filter("owner == $0", realm.object(ofType: Person.self, forPrimaryKey: 1)!).count == 3)
        #expect(dogs.filter("age > 1").filter("name ==[c] 'ace'").count == 2)
        #expect(realm.objects(Person.self).filter("nickname == nil").map(\.name) == ["Ann"])
        #expect(realm.objects(Person.self).filter("dogs.@count > 2").map(\.name) == ["Ann"])
        #expect(realm.objects(Person.self).filter("'東京' IN tags").map(\.name) == ["Ann"])
        #expect(realm.objects(Person.self).filter("ownedDogs.name == 'Bo'").map(\.name) == ["Bob"])
        // Chained with closures and sorts, in the order written.
        #expect(dogs.filter { $0.age < 5 }.filter("name != 'Rex'").sorted(byKeyPath: "name").map(\.age) == [3, 4, 2])
    }

    /// `obj('Class', primaryKey)` looks the object up in the version the results read, each time they do.
    @Test func objectLiteralsFollowTheRealm() throws {
        let realm = try populated()
        let dogs = realm.objects(Dog.self).filter("owner == obj('Person', 2)")
        #expect(dogs.map(\.name) == ["Fido", "Bo"])
        #expect(realm.objects(Dog.self).filter("owner == obj('Person', %@)", 1).count == 3)
        let cy = realm.objects(Dog.self).filter("owner == obj('Person', 3)")
        #expect(cy.isEmpty)
        try realm.write {
            let c = realm.create(Person.self, value: ["id": 3, "name": "Cy", "age": 40])
            realm.create(Dog.self, value: ["name": "Spot", "age": 7, "owner": c])
        }
        #expect(cy.map(\.name) == ["Spot"])
        #expect(throws: RealmError.self) { try realm.objects(Dog.self).filter(query: "owner == obj('Dog', 1)") }
    }

    @Test func sortDistinctLimitInTheQuery() throws {
        let realm = try populated()
        let dogs = realm.objects(Dog.self)
        #expect(dogs.filter("TRUEPREDICATE SORT(name ASC, age DESC)").map(\.age) == [5, 3, 4, 2, 1])
        #expect(dogs.filter("TRUEPREDICATE SORT(name ASC) DISTINCT(name) LIMIT(2)").map(\.name) == ["Ace", "Bo"])
        #expect(dogs.filter("age > 0 SORT(owner.name DESC, age ASC)").map(\.age) == [2, 4, 1, 3, 5])
    }

    @Test func listsAndLinkingObjects() throws {
        let realm = try populated()
        let ann = try #require(realm.object(ofType: Person.self, forPrimaryKey: 1))
        #expect(ann.dogs.filter("age >= 2").map(\.name) == ["Fido", "Ace"])
        #expect(ann.dogs.filter("TRUEPREDICATE SORT(name ASC)").map(\.name) == ["Ace", "Fido", "Rex"])
        let rex = try #require(realm.objects(Dog.self).filter("name == 'Rex'").first)
        #expect(rex.owners.filter("name == 'Ann'").count == 1)
        #expect(rex.owners.filter("name == 'Bob'").isEmpty)
    }

    @Test func dynamicObjects() throws {
        let realm = try populated()
        let dogs = realm.dynamicObjects("Dog").filter("name BEGINSWITH $0 AND owner.age < 30", "B")
        #expect(dogs.count == 1)
        #expect(realm.dynamicObjects("Person").filter("id == 2").count == 1)
    }

    @Test func resultsStayLiveAfterCommits() throws {
        let realm = try populated()
        let old = realm.objects(Dog.self).filter("age > $0", 3)
        #expect(old.count == 2)
        try realm.write { realm.create(Dog.self, value: ["name": "Zed", "age": 9]) }
        #expect(old.count == 3)
        try realm.write { realm.delete(realm.objects(Dog.self).filter("name == 'Zed'")) }
        #expect(old.count == 2)
        // Inside a write transaction, uncommitted objects count.
        realm.beginWrite()
        realm.create(Dog.self, value: ["name": "Yo", "age": 7])
        #expect(old.count == 3)
        realm.cancelWrite()
        #expect(old.count == 2)
    }

    @Test func badQueriesThrowDiagnostics() throws {
        let realm = try populated()
        let dogs = realm.objects(Dog.self)
        do {
            _ = try dogs.filter(query: "agee > 3")
            Issue.record("no error")
        } catch let RealmError.query(e) {
            #expect(e.message.contains("did you mean 'age'?"))
            #expect(e.column == 1)
        }
        #expect(throws: RealmError.self) { try dogs.filter(query: "name > 5") }
        #expect(throws: RealmError.self) { try dogs.filter(query: "name == 'x") }
        #expect(throws: RealmError.self) { try dogs.filter(query: "(age > 1") }
        #expect(throws: RealmError.self) { try dogs.filter(query: "age > $0") }
        let e = try? dogs.filter(query: "age >> 3")
        #expect(e == nil)
        #expect("\(RealmError.query(try #require(catchQuery { try dogs.filter(query: "age >> 3") })))".contains("^"))
    }

    func catchQuery(_ body: () throws -> Results<Dog>) -> QueryError? {
        do { _ = try body() } catch let RealmError.query(e) { return e } catch {}
        return nil
    }

    @Test func badQueryIsAFatalErrorWithTheDiagnostic() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let realm = try! memoryRealm([Dog.self, Person.self])
            _ = realm.objects(Dog.self).filter("agee > 3")
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("unknown property 'agee' on class 'Dog'; did you mean 'age'? at column 1"))
    }
}
