import { Migration } from '@mikro-orm/migrations';

/**
 * Catalog base (issue 11): the category taxonomy (the public directory's 52 categories; a listing's `category` is one
 * of these slugs), where a listing comes from (`provider`, or `directory` for imported entries that are not callable
 * until claimed), and natural-language `examples` of what a listing answers (indexed by search).
 */
export class Migration20261123110000_catalog_base extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "categories" ("slug" varchar(64) not null, "name" varchar(100) not null, "created_at" timestamptz not null default now(), constraint "categories_pkey" primary key ("slug"));`,
    );
    this.addSql(`insert into "categories" ("slug", "name") values
      ('apis-covered-under-apilayer-suite', 'APIs Covered Under APILayer Suite!'),
      ('animals', 'Animals'),
      ('anime', 'Anime'),
      ('anti-malware', 'Anti-Malware'),
      ('art-and-design', 'Art & Design'),
      ('authentication-and-authorization', 'Authentication & Authorization'),
      ('blockchain', 'Blockchain'),
      ('books', 'Books'),
      ('business', 'Business'),
      ('calendar', 'Calendar'),
      ('cloud-storage-and-file-sharing', 'Cloud Storage & File Sharing'),
      ('continuous-integration', 'Continuous Integration'),
      ('cryptocurrency', 'Cryptocurrency'),
      ('currency-exchange', 'Currency Exchange'),
      ('data-validation', 'Data Validation'),
      ('development', 'Development'),
      ('dictionaries', 'Dictionaries'),
      ('documents-and-productivity', 'Documents & Productivity'),
      ('email', 'Email'),
      ('entertainment', 'Entertainment'),
      ('environment', 'Environment'),
      ('events', 'Events'),
      ('finance', 'Finance'),
      ('food-and-drink', 'Food & Drink'),
      ('games-and-comics', 'Games & Comics'),
      ('geocoding', 'Geocoding'),
      ('government', 'Government'),
      ('health', 'Health'),
      ('jobs', 'Jobs'),
      ('machine-learning', 'Machine Learning'),
      ('music', 'Music'),
      ('news', 'News'),
      ('open-data', 'Open Data'),
      ('open-source-projects', 'Open Source Projects'),
      ('patent', 'Patent'),
      ('personality', 'Personality'),
      ('phone', 'Phone'),
      ('photography', 'Photography'),
      ('programming', 'Programming'),
      ('science-and-math', 'Science & Math'),
      ('security', 'Security'),
      ('shopping', 'Shopping'),
      ('social', 'Social'),
      ('sports-and-fitness', 'Sports & Fitness'),
      ('test-data', 'Test Data'),
      ('text-analysis', 'Text Analysis'),
      ('tracking', 'Tracking'),
      ('transportation', 'Transportation'),
      ('url-shorteners', 'URL Shorteners'),
      ('vehicle', 'Vehicle'),
      ('video', 'Video'),
      ('weather', 'Weather')
    on conflict do nothing;`);
    this.addSql(
      `alter table "apis" add column "source" text check ("source" in ('provider', 'directory')) not null default 'provider', add column "examples" text[] not null default '{}';`,
    );
    this.addSql(`create index "apis_status_category_idx" on "apis" ("status", "category");`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index if exists "apis_status_category_idx";`);
    this.addSql(`alter table "apis" drop column "source", drop column "examples";`);
    this.addSql(`drop table if exists "categories" cascade;`);
  }
}
