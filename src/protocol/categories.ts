// RateLoop's question categories, as facts about its live deployment (read from the RateLoop repository, never
// copied): the ask's schema takes categoryId 1 to 8 and names them (src/protocol/ask-schema.ts); docs/ask.md lists them.

/**
 * RateLoop's categories: ids 1 to 8 of the live CategoryRegistry (Base, chain.md: 0x6260E54E…). RateLoop's deploy
 * script (branch main, packages/foundry/script/Deploy.s.sol, `_seedCategories`) adds them in this order, and the
 * registry numbers them from 1; `tags` are the subcategories it gives each (suggested tags; any tag is taken).
 */
export const CATEGORIES = [
  {
    id: 1,
    name: 'Products',
    slug: 'products',
    tags: ['Value', 'Quality', 'Usability', 'Durability', 'Design', 'Support', 'Safety', 'Sustainability'],
  },
  {
    id: 2,
    name: 'Places & Travel',
    slug: 'places-travel',
    tags: [
      'Restaurants',
      'Cafes',
      'Nightlife',
      'Hotels',
      'Attractions',
      'Itineraries',
      'Service',
      'Atmosphere',
      'Accessibility',
      'Value',
      'Local Tips',
      'Family',
      'Solo Travel',
    ],
  },
  {
    id: 3,
    name: 'Software',
    slug: 'software',
    tags: [
      'Web Apps',
      'Mobile Apps',
      'Developer Tools',
      'Repos',
      'Libraries',
      'APIs',
      'Smart Contracts',
      'Productivity',
      'Onboarding',
      'Performance',
      'Trust',
      'Pricing',
    ],
  },
  {
    id: 4,
    name: 'Media',
    slug: 'media',
    tags: ['Images', 'YouTube', 'Education', 'Entertainment', 'Art', 'Photography', 'Audio', 'Culture'],
  },
  {
    id: 5,
    name: 'Design',
    slug: 'design',
    tags: ['Visual Design', 'Brand', 'Typography', 'Layout', 'Accessibility', 'Photography', 'Fashion', 'Architecture'],
  },
  {
    id: 6,
    name: 'AI Answers',
    slug: 'ai-answers',
    tags: ['Helpfulness', 'Clarity', 'Safety', 'Creativity', 'Reasoning', 'Code', 'Images', 'Research'],
  },
  {
    id: 7,
    name: 'Text',
    slug: 'text',
    tags: [
      'Developer Docs',
      'Getting Started',
      'API Reference',
      'Tutorials',
      'Articles',
      'Research',
      'Policy',
      'Copywriting',
      'Accuracy',
      'Completeness',
      'Readability',
      'Troubleshooting',
      'Examples',
    ],
  },
  {
    id: 8,
    name: 'General',
    slug: 'general',
    tags: ['Taste', 'Usefulness', 'Interesting', 'Clear', 'Fun', 'Convincing', 'Worthwhile', 'Other'],
  },
] as const;
